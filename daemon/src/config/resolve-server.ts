import type { TransportConfig } from "@mcpd/transports";
import type { z } from "zod";
import type { ResolvedServerConfig } from "./config-schema.js";
import { RENAMED_KEYS, SERVER_NAME_PATTERN } from "./config-schema.js";
import type { ConfigIssues } from "./config-issues.js";
import { expandDeep } from "./expand-vars.js";
import { shortHash } from "./config-hash.js";
import { finishItemFilters } from "./filter-config.js";
import { readWithSchema } from "./read-with-schema.js";
import { FOREIGN_KEYS, MCPD_OPTIONS_SHAPE, ServerEntrySchema, TRANSPORT_SHAPE } from "./server-entry-schema.js";
import { finishMcpdOptions, resolveMcpdOptions, type McpdOptions, type ResolvedMcpdOptions } from "./server-options.js";
import { readAuthConfig, type AuthConfig } from "./auth-config.js";
import { readTransport, type TransportEntry } from "./server-transport.js";

/** Everything {@link resolveServer} needs besides the entry. */
export interface ServerContext {
  issues: ConfigIssues;
  env: NodeJS.ProcessEnv;
  /** Relative `cwd` values resolve against this (the config file's directory). */
  baseDir: string;
  homedir: string;
  /** The validated `mcpd.defaults`. */
  defaults: McpdOptions;
  /**
   * `error` (default): a `${NAME}` without a default whose variable is unset is an error (a warning for a
   * disabled server). `defer`: it is a warning, the reference stays as written, and a `url` holding one
   * is not checked: for checking entries meant for another environment (the daemon's), as import does.
   */
  unsetVariables?: "error" | "defer";
}

type ServerEntry = Partial<z.output<typeof ServerEntrySchema>>;

const TRANSPORT_KEYS = Object.keys(TRANSPORT_SHAPE);
const MCPD_KEYS = Object.keys(MCPD_OPTIONS_SHAPE);

/**
 * Validates one server entry, expands its variables and applies defaults. Problems go to
 * `ctx.issues`; returns undefined when the entry has errors. The result is not yet frozen.
 */
export function resolveServer(name: string, raw: unknown, ctx: ServerContext): ResolvedServerConfig | undefined {
  const { issues } = ctx;
  const errorsBefore = issues.errors.length;
  if (!SERVER_NAME_PATTERN.test(name)) {
    const suggestion = name.replace(/[^A-Za-z0-9_-]+/g, "_").slice(0, 48) || "server";
    issues.error(`server "${name}"`, `invalid name: use 1 to 48 letters, digits, "_" or "-" (for example "${suggestion}")`);
  }
  const where = `server "${name}"`;
  const read = readWithSchema(ServerEntrySchema, raw, {
    issues,
    where,
    prefix: "",
    skip: ["auth"],
    noHint: FOREIGN_KEYS,
    renamed: RENAMED_KEYS,
    unknownKey: (key) =>
      key === "envFile" ? `"envFile" is not supported and is ignored; list the variables in "env" (values may use \${VAR})` : undefined,
  });
  if (read === undefined) return undefined;
  const entryRaw = raw as Record<string, unknown>;
  const resolved = readServerOptions(read, { ...ctx, where });
  const filters = finishItemFilters(read, "", where, issues);
  const { entry, unresolved } = expandEntry(entryRaw, resolved.enabled, { ...ctx, where });
  // A transport key the schema refused is reported already: the transport is not judged further.
  const transportRead = TRANSPORT_KEYS.every((k) => entryRaw[k] === undefined || Object.hasOwn(read, k));
  const transport = transportRead
    ? readTransport(
        entry as TransportEntry,
        { ...ctx, where },
        {
          timeout: resolved.timeout,
          envMode: resolved.envMode,
          envModeGiven: read.envMode !== undefined,
          urlUnresolved: unresolved.has("url"),
        },
      )
    : undefined;
  const auth = readServerAuth(entry.auth, transport, { ...ctx, where });
  if (!transport || auth === null || issues.errors.length > errorsBefore) return undefined;

  const { timeout: _ignored, ...transportIdentity } = transport;
  // `filters` only when set: a server without filters keeps the hash it had before filters existed.
  // `logLevel` likewise: a server whose level follows the daemon's keeps its hash; and `protocolEra: "auto"`.
  const body = {
    enabled: resolved.enabled,
    transport,
    ...withoutKeys(resolved, ["enabled", "envMode", "logLevel", "protocolEra"]),
    ...(resolved.logLevel === null ? {} : { logLevel: resolved.logLevel }),
    ...(resolved.protocolEra === "auto" ? {} : { protocolEra: resolved.protocolEra }),
    ...(filters ? { filters } : {}),
    ...(auth === undefined ? {} : { auth }),
  };
  return {
    name,
    ...body,
    protocolEra: resolved.protocolEra,
    hash: shortHash(body),
    // The OAuth client is part of who the server is talking to (its tokens, its scopes); without one the
    // hash stays what it was before `auth` existed, so tool caches keep their keys.
    transportHash: shortHash(auth === undefined ? transportIdentity : { ...transportIdentity, auth }),
  };
}

/** mcpd's own keys of the entry (with the `disabled` other clients write), over `mcpd.defaults` and the built-in defaults. */
function readServerOptions(read: ServerEntry, ctx: ServerContext & { where: string }): ResolvedMcpdOptions {
  const { issues, where } = ctx;
  const given = Object.fromEntries(MCPD_KEYS.filter((k) => Object.hasOwn(read, k)).map((k) => [k, read[k as keyof ServerEntry]]));
  const options = finishMcpdOptions(given as McpdOptions, { issues, where, homedir: ctx.homedir });
  if (read.disabled !== undefined) {
    // Cline and Roo write "disabled": true; honour it unless it contradicts "enabled".
    if (options.enabled !== undefined && options.enabled === read.disabled) {
      issues.error(where, `"enabled": ${options.enabled} contradicts "disabled": ${read.disabled}; keep one of them`);
    } else {
      options.enabled ??= !read.disabled;
    }
  }
  return resolveMcpdOptions(options, ctx.defaults, { issues, where, homedir: ctx.homedir });
}

/**
 * The entry's transport keys and `auth` with their `${VAR}`s expanded, and the paths of the strings
 * holding a variable unset here. An unset variable is an error for an enabled server, a warning for a
 * disabled one, and a warning under `unsetVariables: "defer"`.
 */
function expandEntry(
  raw: Record<string, unknown>,
  enabled: boolean,
  ctx: ServerContext & { where: string },
): { entry: Record<string, unknown>; unresolved: Set<string> } {
  const { issues, where } = ctx;
  // Only the keys mcpd uses are expanded: a foreign key's ${input:...} must not fail the file.
  // `auth` is expanded with them: its secret belongs in a variable, not in the file.
  const transportRaw = Object.fromEntries([...TRANSPORT_KEYS, "auth"].filter((k) => raw[k] !== undefined).map((k) => [k, raw[k]]));
  const defer = ctx.unsetVariables === "defer";
  const expanded = expandDeep(transportRaw, ctx.env, "", { keepUnset: defer });
  // Strings holding an unset variable: already reported, so their value is not judged again (a url).
  const unresolved = new Set(expanded.problems.filter((p) => p.kind === "unset").map((p) => p.path));
  for (const problem of expanded.problems) {
    if (problem.kind === "syntax") {
      issues.error(where, `"${problem.path}": ${problem.message}`);
    } else if (defer) {
      issues.warn(where, `"${problem.path}" uses \${${problem.message}}, which is not set here: the daemon needs it in its environment`);
    } else if (enabled) {
      issues.error(
        where,
        `"${problem.path}": environment variable ${problem.message} is not set ` +
          `(set it, or write \${${problem.message}:-default} for a fallback)`,
      );
    } else {
      issues.warn(
        where,
        `"${problem.path}": environment variable ${problem.message} is not set; the server is disabled, so it is left empty`,
      );
    }
  }
  return { entry: expanded.value as Record<string, unknown>, unresolved };
}

/**
 * A server's `auth` (see {@link readAuthConfig}), for an http or sse server only; it cannot sit beside a
 * configured `Authorization` header. Null when invalid (reported).
 */
function readServerAuth(
  value: unknown,
  transport: TransportConfig | undefined,
  ctx: ServerContext & { where: string },
): AuthConfig | false | undefined | null {
  if (value === undefined || transport === undefined) return undefined;
  if (transport.type !== "http" && transport.type !== "sse") {
    ctx.issues.warn(ctx.where, `"auth" is ignored for a ${transport.type ?? "stdio"} server (OAuth applies to "http" and "sse" servers)`);
    return undefined;
  }
  const auth = readAuthConfig(value, { issues: ctx.issues, where: ctx.where, homedir: ctx.homedir, baseDir: ctx.baseDir });
  if (auth && Object.keys(transport.headers ?? {}).some((h) => h.toLowerCase() === "authorization")) {
    ctx.issues.error(ctx.where, `has both an "Authorization" header and "auth" (OAuth); keep one`);
    return null;
  }
  return auth;
}

function withoutKeys<T extends object, K extends keyof T>(obj: T, keys: readonly K[]): Omit<T, K> {
  const copy = { ...obj };
  for (const key of keys) delete copy[key];
  return copy;
}
