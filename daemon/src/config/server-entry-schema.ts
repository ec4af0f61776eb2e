/**
 * The schema of one server entry (`mcpServers.<name>`, `servers.<name>`) and of `mcpd.defaults`: mcpd's
 * own keys, the filters, the transport keys other clients share, `auth`, and other tools' keys mcpd
 * accepts and ignores. What a key means beyond its value (variables, paths, which keys go together) is
 * resolve-server.ts's; docs/configuration.md's key table is generated from the descriptions here.
 */
import path from "node:path";
import { MAX_TIMER_MS, PROTOCOL_DEFAULTS, PROTOCOL_ERA_SETTINGS, quote } from "@mcpd/protocol";
import { JWT_ALGORITHMS } from "@mcpd/transports";
import { z } from "zod";
import { CONFIG_DEFAULTS } from "../defaults.js";
import { describeValue } from "./config-issues.js";
import { LOG_LEVEL_VALUES, TRANSPORT_TYPE_ALIASES } from "./config-names.js";
import { hintFor } from "./did-you-mean.js";
import { globProblem } from "./globs.js";
import { renamedKeys } from "./read-with-schema.js";
import { bool, intIn, keys, kindOf, mustBe, mustBeSecretSafe, oneOf } from "./schema-rules.js";

const D = CONFIG_DEFAULTS;
const POSITIVE_MS = "a positive integer (milliseconds)";
const NON_NEGATIVE_MS = "an integer >= 0 (milliseconds)";

/** `restart`: the crash-loop breaker and backoff; partial objects are merged with the defaults. */
export const RestartSchema = keys(
  {
    maxRestarts: intIn(0, 1_000_000, "an integer >= 0").optional().meta({
      default: D.restart.maxRestarts,
      description: "Restarts allowed within `windowMs`; one more and the server is marked failed. `0`: never restart.",
    }),
    windowMs: intIn(1, MAX_TIMER_MS, POSITIVE_MS, true)
      .optional()
      .meta({ default: D.restart.windowMs, description: "The sliding window restarts are counted in, in ms." }),
    initialDelayMs: intIn(0, MAX_TIMER_MS, NON_NEGATIVE_MS, true)
      .optional()
      .meta({ default: D.restart.initialDelayMs, description: "Delay before the first restart, in ms; later delays grow exponentially." }),
    maxDelayMs: intIn(0, MAX_TIMER_MS, NON_NEGATIVE_MS, true)
      .optional()
      .meta({ default: D.restart.maxDelayMs, description: "Largest delay between restarts, in ms; not below `initialDelayMs`." }),
  },
  `an object like {"maxRestarts": 5, "windowMs": 60000}`,
);

const ROOT_EXAMPLE = `an object like {"uri": "file:///path", "name": "..."}`;

/** A `file://` URI or an absolute (or `~/`) path; resolve-server.ts turns a path into a URI. */
const RootUri = z
  .string({ error: mustBe("a file:// URI or an absolute path") })
  .refine((v) => isFileUriOrPath(v), { error: mustBe("a file:// URI or an absolute path") });

const RootObject = keys({ uri: RootUri, name: z.string({ error: mustBe("a string") }).optional() }, ROOT_EXAMPLE);

/** One root: an object, or a bare string as shorthand for `{"uri": ...}`. */
export const RootSchema = z.preprocess((v) => (typeof v === "string" ? { uri: v } : v), RootObject);

function isFileUriOrPath(value: string): boolean {
  if (value.startsWith("file://")) return URL.canParse(value);
  return value === "~" || value.startsWith("~/") || (value !== "" && path.isAbsolute(value));
}

/** A glob of a filter: checked for what globs.ts can match, within its length bound. */
const Glob = z.string({ error: mustBe(`a glob string such as "github__*"`) }).check((ctx) => {
  const glob = ctx.value;
  const problem = glob.length > D.maxGlobChars ? `longer than ${D.maxGlobChars} characters` : globProblem(glob);
  if (problem === undefined) return;
  ctx.issues.push({
    code: "custom",
    input: glob,
    message: `${JSON.stringify(quote(glob, PROTOCOL_DEFAULTS.quotedGlobChars))} is not a usable glob: ${problem}`,
  });
});

const GLOB_LIST = `an array of glob strings such as ["github__*"]`;
const GlobList = z
  .array(Glob, { error: mustBe(GLOB_LIST) })
  .max(D.maxGlobsPerList, { error: (i) => `has ${(i.input as unknown[]).length} globs, more than the ${D.maxGlobsPerList} allowed` });

/** One filter: `{"include": [...], "exclude": [...]}` over names or URIs. */
export const NameFilterSchema = renamedKeys(
  { allow: "include", deny: "exclude" },
  keys(
    {
      include: GlobList.optional().describe("Only the names one of these globs matches; absent: every name."),
      exclude: GlobList.optional().describe("The names one of these globs matches are hidden, included or not."),
    },
    `an object such as {"include": ["search_*"], "exclude": ["delete_*"]}`,
  ),
);

/** The filters of a server or a profile. */
export const FILTER_SHAPE = {
  tools: NameFilterSchema.optional().describe("Filter over tool names (a server's own; in a profile, `<server>__<tool>`)."),
  prompts: NameFilterSchema.optional().describe("Filter over prompt names, the same way."),
  resources: NameFilterSchema.optional().describe(
    "Filter over resource URIs and URI templates (in a profile, also their `mcpd://<server>/` form).",
  ),
};

/** mcpd's own per-server keys, in the order they are checked and reported; the keys of `mcpd.defaults`. */
export const MCPD_OPTIONS_SHAPE = {
  enabled: bool()
    .optional()
    .meta({ default: true, description: '`false`: keep the entry but never start it (Cline\'s `"disabled": true` is honoured too).' }),
  timeout: intIn(1, MAX_TIMER_MS, POSITIVE_MS, true).optional().meta({
    default: D.requestTimeoutMs,
    description: "Deadline of one request to this server, in ms (under 1000: a warning, other tools write seconds).",
  }),
  maxTotalTimeout: intIn(1, MAX_TIMER_MS, POSITIVE_MS, true).optional().meta({
    default: D.maxTotalTimeoutMs,
    description: "Progress restarts `timeout`, but a request never lives longer than this, in ms; not below `timeout`.",
  }),
  startup: oneOf(["eager", "lazy"])
    .optional()
    .meta({ default: D.startup, description: "`eager`: start with the daemon. `lazy`: on first use." }),
  idleTimeout: intIn(0, MAX_TIMER_MS, "an integer >= 0 (milliseconds; 0 = never)", true)
    .optional()
    .meta({ default: D.idleTimeoutMs, description: "Stop the server after this many ms without requests; `0`: never." }),
  maxConcurrency: intIn(1, 10_000, "an integer from 1 to 10000")
    .optional()
    .meta({ default: D.maxConcurrency, description: "Requests in flight to this server at a time." }),
  maxQueue: intIn(0, 1_000_000, "an integer from 0 to 1000000")
    .optional()
    .meta({ default: D.maxQueue, description: "Requests allowed to wait for a slot; beyond it they fail with `MCPD_QUEUE_FULL`." }),
  sharing: oneOf(["shared", "per-client"])
    .optional()
    .meta({ default: D.sharing, description: "`shared`: one upstream session for every client. `per-client`: one each." }),
  healthCheckIntervalMs: intIn(0, MAX_TIMER_MS, "an integer >= 0 (milliseconds; 0 disables)", true).optional().meta({
    default: D.healthCheckIntervalMs,
    description: "Ping the server when it has answered nothing for this long, in ms, busy or idle; `0` disables.",
  }),
  envMode: oneOf(["inherit", "allowlist"]).optional().meta({
    default: D.envMode,
    description: "stdio only: `allowlist` passes the allowlisted variables plus `env`; `inherit` the daemon's whole environment.",
  }),
  logLevel: oneOf(LOG_LEVEL_VALUES)
    .optional()
    .describe("The level of this server's lines in the daemon's log; unset: the daemon's `mcpd.logLevel`."),
  protocolEra: oneOf(PROTOCOL_ERA_SETTINGS).optional().meta({
    default: D.protocolEra,
    description:
      "The MCP era mcpd speaks to the server: `2025` (`initialize` first), `2026` (no handshake; 2026-07-28), or `auto` (probed with `server/discover`, remembered).",
  }),
  restart: RestartSchema.optional().describe("Restart backoff and crash-loop breaker."),
  roots: z
    .array(RootSchema, { error: mustBe(`an array of {"uri": "file:///...", "name": "..."}`) })
    .optional()
    .meta({ default: [], description: "Roots answered for the server's `roots/list` when no single client can be asked." }),
};

/** `mcpd.defaults`: mcpd's per-server keys, applied to every server. */
export const McpdOptionsSchema = keys(MCPD_OPTIONS_SHAPE, `an object of per-server keys such as {"timeout": 60000}`);

const TYPE_NAMES = Object.keys(TRANSPORT_TYPE_ALIASES) as [string, ...string[]];

const StringRecord = (name: RegExp) =>
  z
    .record(
      z.string(),
      // Never echo a value from env/headers: it may be a secret.
      z.string({
        error: (i) =>
          `must be a string, got ${kindOf(i.input)}${typeof i.input === "number" || typeof i.input === "boolean" ? " (put the value in quotes)" : ""}`,
      }),
      { error: mustBeSecretSafe("an object of string values") },
    )
    .check((ctx) => {
      for (const key of Object.keys(ctx.value)) {
        if (!name.test(key)) ctx.issues.push({ code: "custom", input: ctx.value, message: `has an invalid name ${JSON.stringify(key)}` });
      }
    })
    .meta({ propertyNames: { pattern: name.source } });

/** The keys that say how to reach the server (the format Claude, Cursor and VS Code share). */
export const TRANSPORT_SHAPE = {
  type: z
    .enum(TYPE_NAMES, {
      error: (i) =>
        `must be one of "stdio", "http", "sse", "ws" (or "streamable-http"), got ${describeValue(i.input)}${typeof i.input === "string" ? hintFor(i.input, TYPE_NAMES) : ""}`,
    })
    .optional()
    .describe("`stdio`, `http` (Streamable HTTP; also `streamable-http`), `sse` (legacy HTTP+SSE) or `ws`; absent: from `command`/`url`."),
  command: z
    .string({ error: mustBe("a non-empty string") })
    .optional()
    .describe("stdio: the program to run (looked up in `PATH`)."),
  args: z
    .array(
      // An argument may be a secret (`--api-key ...`): only a number or a boolean is shown, anything else by its kind.
      z.string({
        error: (i) =>
          typeof i.input === "number" || typeof i.input === "boolean"
            ? `must be a string, got ${describeValue(i.input)}${typeof i.input === "number" ? ` (write "${i.input}")` : ""}`
            : `must be a string, got ${kindOf(i.input)}`,
      }),
      {
        error: mustBeSecretSafe("an array of strings"),
      },
    )
    .optional()
    .meta({ default: [], description: "stdio: the program's arguments (numbers quoted)." }),
  env: StringRecord(/^[^=\0]+$/)
    .optional()
    .meta({ default: {}, description: "stdio: variables added to the program's environment." }),
  cwd: z
    .string({ error: mustBe("a non-empty path") })
    .min(1, { error: mustBe("a non-empty path") })
    .optional()
    .describe("stdio: working directory (relative to the config file's directory; `~/` is `HOME`)."),
  url: z
    .string({ error: mustBe("a string") })
    .optional()
    .describe("A remote server's URL: `http(s)://` (http, sse) or `ws(s)://` (ws)."),
  headers: StringRecord(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/)
    .optional()
    .meta({ default: {}, description: "A remote server's HTTP headers (values may hold variables, see Variables)." }),
};

const NON_EMPTY = z
  .string({ error: (i) => `must be a non-empty string, got ${kindOf(i.input)}` })
  .refine((v) => v.trim() !== "", { error: "must be a non-empty string, got an empty one" });
const SCOPES = "an array of scope names (or one space-separated string)";

/** `auth`'s object: the OAuth client settings of an http or sse server. */
export const AuthObjectSchema = keys(
  {
    grant: z
      .enum(["authorization_code", "client_credentials"], { error: mustBe(`"authorization_code" or "client_credentials"`) })
      .optional()
      .meta({
        default: "authorization_code",
        description: "`authorization_code` (a user, in a browser) or `client_credentials` (no user).",
      }),
    clientId: NON_EMPTY.optional().describe("A client registered with the authorization server beforehand."),
    clientSecret: NON_EMPTY.optional().describe("That client's secret; a variable keeps it out of the file."),
    privateKey: NON_EMPTY.optional().describe("A PEM private key for `private_key_jwt`, usually a variable."),
    privateKeyFile: NON_EMPTY.optional().describe("A file holding that key (`~` and relative paths resolved like `cwd`)."),
    signingAlgorithm: NON_EMPTY.refine((v) => JWT_ALGORITHMS.includes(v), {
      error: (i) => `must be one of ${JWT_ALGORITHMS.join(", ")}, got ${describeValue(i.input)}`,
    })
      .optional()
      .describe(`The JWT algorithm: ${JWT_ALGORITHMS.join(", ")}; default: from the key and the server.`),
    scopes: z
      .union([z.string(), z.array(z.string().regex(/^\S+$/))], { error: mustBe(SCOPES) })
      .transform((v) => [...new Set(typeof v === "string" ? v.split(/\s+/).filter((s) => s !== "") : v)])
      .optional()
      .describe("Scopes to request instead of the server's (an array, or one space-separated string)."),
    clientMetadataUrl: NON_EMPTY.refine(isHttpsWithPath, { error: mustBe("an https URL with a path (a Client ID Metadata Document)") })
      .optional()
      .describe("An https URL of a Client ID Metadata Document describing mcpd."),
    clientName: NON_EMPTY.optional().meta({ default: "mcpd", description: "`client_name` in a Dynamic Client Registration." }),
    redirectPort: intIn(1, 65_535, "a port number (1 to 65535)")
      .optional()
      .describe("The loopback port of the `/callback` redirect URI; default: the registered one, else any."),
  },
  "an object (OAuth settings), true or false",
);

function isHttpsWithPath(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const u = new URL(value);
  return u.protocol === "https:" && u.pathname.length > 1;
}

/** Other tools' per-server keys, accepted and ignored (`disabled` is honoured). */
export const FOREIGN_SHAPE = {
  disabled: bool().optional().describe("Cline's and Roo's: `true` is `\"enabled\": false`."),
  autoApprove: z.unknown().optional().describe("Another tool's key (Cline, Roo): accepted and ignored."),
  alwaysAllow: z.unknown().optional().describe("Another tool's key (Roo): accepted and ignored."),
  description: z.unknown().optional().describe("Another tool's key: accepted and ignored."),
  dev: z.unknown().optional().describe("VS Code's: accepted and ignored."),
  gallery: z.unknown().optional().describe("VS Code's: accepted and ignored."),
  version: z.unknown().optional().describe("VS Code's: accepted and ignored."),
};

/** One server entry. */
export const ServerEntrySchema = keys(
  {
    ...MCPD_OPTIONS_SHAPE,
    ...FILTER_SHAPE,
    ...TRANSPORT_SHAPE,
    auth: z
      .union([z.boolean(), AuthObjectSchema])
      .optional()
      .describe("http/sse: OAuth (`false`: never; `true` or an object: OAuth with these settings)."),
    ...FOREIGN_SHAPE,
  },
  `an object with "command" (a local process) or "url" (a remote server)`,
);

/** Keys of a server entry a hint never suggests. */
export const FOREIGN_KEYS = Object.keys(FOREIGN_SHAPE);
