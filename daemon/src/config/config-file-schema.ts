/**
 * The schema of the whole config file: the top level, the `mcpd` section (`http`, `profiles`, the
 * daemon's limits) and the server entries (server-entry-schema.ts). parse-config.ts reads the file with
 * it (read-with-schema.ts); {@link configJsonSchema} is its JSON Schema, published as
 * daemon/config.schema.json and printed by `mcpd config schema`, which a `"$schema"` key in the file
 * points editors to.
 */
import { MAX_TIMER_MS } from "@mcpd/protocol";
import { z } from "zod";
import { CONFIG_DEFAULTS, RUNTIME_DEFAULTS } from "../defaults.js";
import { LOG_LEVEL_VALUES, PROFILE_NAME_PATTERN, SERVER_NAME_PATTERN, TOOL_SEARCH_MODES } from "./config-names.js";
import { FILTER_SHAPE, McpdOptionsSchema, RootSchema, ServerEntrySchema } from "./server-entry-schema.js";
import { bool, intIn, keys, mustBe, oneOf } from "./schema-rules.js";

const H = CONFIG_DEFAULTS.http;
const HOST_NAME = /^[A-Za-z0-9.:[\]-]{1,253}$/;

/** `mcpd.http`: the HTTP front end. */
export const HttpSettingsSchema = keys(
  {
    enabled: bool().optional().meta({ default: H.enabled, description: "Serve MCP over HTTP at all." }),
    port: intIn(0, 65_535, "an integer from 0 to 65535 (0: any free port)")
      .optional()
      .meta({ default: H.port, description: "TCP port; `0`: any free port. `MCPD_HTTP_PORT` overrides it." }),
    host: z
      .string({ error: mustBe(`an address to listen on such as "127.0.0.1"`) })
      .regex(HOST_NAME, { error: mustBe(`an address to listen on such as "127.0.0.1"`) })
      .transform((h) => h.replace(/^\[(.*)\]$/, "$1"))
      .optional()
      .meta({ default: H.host, description: "Address to listen on (with `::1` for the default); not loopback needs `allowRemote`." }),
    allowRemote: bool().optional().meta({ default: H.allowRemote, description: "Allow a `host` that is not a loopback address." }),
    allowedHosts: z
      .array(z.string().regex(HOST_NAME), { error: mustBe(`a list of host names such as ["mybox.local"]`) })
      .optional()
      .meta({ default: [], description: "Host names accepted in `Host`/`Origin` besides the loopback names." }),
    maxSessions: intIn(1, 100_000, "an integer from 1 to 100000")
      .optional()
      .meta({ default: H.maxSessions, description: "Sessions open at once; the next initialize gets 503." }),
    sessionIdleMs: intIn(1_000, MAX_TIMER_MS, `an integer from 1000 to ${MAX_TIMER_MS} (milliseconds)`)
      .optional()
      .meta({ default: H.sessionIdleMs, description: "A Streamable HTTP session with nothing under way this long ends, in ms." }),
    streamAfterMs: intIn(0, 60_000, "an integer from 0 to 60000 (milliseconds; 0: always stream)")
      .optional()
      .meta({ default: H.streamAfterMs, description: "A long call not answered within this many ms is answered on SSE; `0`: always." }),
    requestTimeoutMs: intIn(100, 600_000, "an integer from 100 to 600000 (milliseconds)")
      .optional()
      .meta({ default: H.requestTimeoutMs, description: "A request's headers and body must arrive within this many ms, else 408." }),
  },
  `an object such as {"enabled": true, "port": ${H.port}}`,
);

const T = CONFIG_DEFAULTS.telemetryOtlp;

/** `mcpd.telemetry`: what mcpd reports of itself besides its log and `/metrics`. */
export const TelemetrySettingsSchema = keys(
  {
    otlp: keys(
      {
        endpoint: z
          .string({ error: mustBe(`an http(s) URL such as "http://127.0.0.1:4318/v1/traces"`) })
          .regex(/^https?:\/\/[^\s/?#]+(?:[/?#]\S*)?$/i, { error: mustBe(`an http(s) URL such as "http://127.0.0.1:4318/v1/traces"`) })
          .meta({ description: "The OTLP/HTTP traces URL spans are POSTed to (JSON encoding), used as written." }),
        headers: z
          .record(z.string(), z.string(), { error: mustBe(`an object of header names to strings such as {"x-api-key": "..."}`) })
          .optional()
          .meta({ default: {}, description: "HTTP headers sent with every export (e.g. the collector's API key)." }),
        serviceName: z
          .string({ error: mustBe("a string") })
          .min(1)
          .optional()
          .meta({ default: T.serviceName, description: "The `service.name` of the spans' resource." }),
        batchDelayMs: intIn(1, 60_000, "an integer from 1 to 60000 (milliseconds)")
          .optional()
          .meta({ default: T.batchDelayMs, description: "Spans are sent in batches at most this many ms after the oldest ended." }),
        exportTimeoutMs: intIn(100, 600_000, "an integer from 100 to 600000 (milliseconds)")
          .optional()
          .meta({ default: T.exportTimeoutMs, description: "One export's deadline, in ms." }),
        maxQueueSpans: intIn(1, 1_000_000, "an integer from 1 to 1000000")
          .optional()
          .meta({ default: T.maxQueueSpans, description: "Ended spans waiting to be sent; past it new ones are dropped." }),
      },
      `an object such as {"endpoint": "http://127.0.0.1:4318/v1/traces"}`,
    )
      .optional()
      .describe("Export one span per relayed request over OTLP/HTTP; absent: no export, and the OpenTelemetry SDK is never loaded."),
  },
  `an object such as {"otlp": {"endpoint": "http://127.0.0.1:4318/v1/traces"}}`,
);

/** One profile: a named view over the aggregate view. */
/**
 * A profile's `toolSearch`, checked by readToolSearch (its texts name the key and a close one for a
 * misspelt key); its JSON Schema is written out in {@link configJsonSchema}.
 */
const ToolSearchSchema = z.unknown().optional().meta({
  default: "off",
  description:
    "Tool search for the views that select the profile: `on`, `off`, `auto` (past `autoThreshold` tools), and `callTool`; see docs/tool-search.md.",
});

export const ProfileSchema = keys(
  {
    servers: z
      .array(z.string(), { error: mustBe("an array of configured server names") })
      .optional()
      .describe("The servers the profile sees, by name; absent: every server."),
    ...FILTER_SHAPE,
    toolSearch: ToolSearchSchema,
  },
  `an object such as {"servers": ["github"], "tools": {"include": ["github__*"]}}`,
);

/** `mcpd.profiles`: profile names to profiles. */
export const ProfilesSchema = z
  .record(z.string().regex(PROFILE_NAME_PATTERN), ProfileSchema, {
    error: mustBe(`an object mapping profile names to profiles such as {"coding": {"servers": ["github"]}}`),
  })
  .meta({ default: {}, description: "Named views a connection selects (`mcpd/select`); see Tool selection." });

const R = RUNTIME_DEFAULTS;

/** The top-level `mcpd` section. */
export const SettingsSchema = keys(
  {
    logLevel: oneOf(LOG_LEVEL_VALUES)
      .optional()
      .meta({ default: CONFIG_DEFAULTS.logLevel, description: "The daemon's log level; applied by `mcpd reload`." }),
    defaults: McpdOptionsSchema.optional().meta({ default: {}, description: "mcpd's per-server keys applied to every server." }),
    maxConnections: intIn(1, 1_000_000, "an integer from 1 to 1000000")
      .optional()
      .meta({ default: R.maxConnections, description: "Client connections accepted at once (fewer when the open-file limit is low)." }),
    fdReserve: intIn(0, 1_000_000, "an integer from 0 to 1000000")
      .optional()
      .meta({ default: R.fdReserve, description: "Open files kept free besides each server's share." }),
    maxBufferedBytesTotal: intIn(65_536, Number.MAX_SAFE_INTEGER, "an integer of at least 65536 (bytes)")
      .optional()
      .meta({ default: R.maxBufferedBytesTotal, description: "Bytes held for all clients together (socket and HTTP)." }),
    partialLineTimeoutMs: intIn(1, MAX_TIMER_MS, `an integer from 1 to ${MAX_TIMER_MS} (milliseconds)`)
      .optional()
      .meta({ default: R.partialLineTimeoutMs, description: "A client's line must be finished within this many ms of its first byte." }),
    maxInputRounds: intIn(1, 1_000, "an integer from 1 to 1000")
      .optional()
      .meta({ default: CONFIG_DEFAULTS.maxInputRounds, description: "`input_required` rounds mcpd runs for a 2025-era client's call." }),
    requestStateTtlMs: intIn(1, MAX_TIMER_MS, `an integer from 1 to ${MAX_TIMER_MS} (milliseconds)`)
      .optional()
      .meta({ default: CONFIG_DEFAULTS.requestStateTtlMs, description: "A `requestState` mcpd issues expires after this many ms." }),
    http: HttpSettingsSchema.optional().describe("The HTTP front end (Streamable HTTP and legacy SSE on loopback)."),
    profiles: ProfilesSchema.optional(),
    telemetry: TelemetrySettingsSchema.optional().describe("Span export (OpenTelemetry, OTLP/HTTP); see docs/operations.md, Tracing."),
  },
  `an object such as {"logLevel": "info"}`,
);

const ServersSchema = z.record(z.string().regex(SERVER_NAME_PATTERN), ServerEntrySchema, {
  error: mustBe("an object mapping server names to server entries"),
});

/** The whole file. */
export const ConfigFileSchema = keys(
  {
    $schema: z.string().optional().describe("The JSON Schema this file follows (for editors); mcpd ignores it."),
    mcpServers: ServersSchema.optional().describe("Server names to server entries (Claude Desktop/Code, Cursor)."),
    servers: ServersSchema.optional().describe("Server names to server entries (VS Code); merged with `mcpServers`."),
    mcpd: SettingsSchema.optional().describe("mcpd's own settings."),
    inputs: z.array(z.unknown()).optional().describe("VS Code's prompted inputs: accepted and ignored."),
  },
  `a JSON object such as {"mcpServers": {}}`,
);

/** The config file's type as written (every key optional), inferred from the schema. */
export type ConfigFile = z.input<typeof ConfigFileSchema>;

/**
 * The JSON Schema (draft 2020-12) of the config file as written: every key with its description,
 * default and bounds; unknown keys are not allowed (mcpd warns of them), so an editor flags a misspelt one.
 */
export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ConfigFileSchema, {
    io: "input",
    unrepresentable: "any",
    override: (ctx) => {
      // zod leaves out the default of a schema holding a transform (in input mode); editors still want it.
      const meta = z.globalRegistry.get(ctx.zodSchema as unknown as z.ZodType);
      if (meta?.default !== undefined && ctx.jsonSchema.default === undefined) ctx.jsonSchema.default = meta.default as never;
      // A root may be a bare path string as well as an object; the preprocessing step is not representable.
      if (ctx.zodSchema === ToolSearchSchema) {
        ctx.jsonSchema.anyOf = [
          { type: "string", enum: [...TOOL_SEARCH_MODES] },
          {
            type: "object",
            properties: {
              mode: { type: "string", enum: [...TOOL_SEARCH_MODES] },
              autoThreshold: { type: "integer", minimum: 0, default: CONFIG_DEFAULTS.toolSearch.autoThreshold },
              callTool: { type: "boolean", default: false },
            },
            required: ["mode"],
            additionalProperties: false,
          },
        ];
      }
      if (ctx.zodSchema === RootSchema) {
        const object = ctx.jsonSchema.anyOf ?? [{ ...ctx.jsonSchema }];
        for (const k of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[k];
        ctx.jsonSchema.anyOf = [{ type: "string", description: "A file:// URI or an absolute path." }, ...object];
      }
    },
  });
  return { ...schema, title: "mcpd config.json" };
}
