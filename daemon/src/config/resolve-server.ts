import path from "node:path";
import type { TransportConfig } from "@mcpd/transports";
import type { ResolvedServerConfig } from "./config-schema.js";
import { FILTER_KINDS, FOREIGN_SERVER_KEYS, MCPD_SERVER_KEYS, RENAMED_KEYS, SERVER_NAME_PATTERN, TRANSPORT_KEYS } from "./config-schema.js";
import { describeValue, isPlainObject, type ConfigIssues } from "./config-issues.js";
import { hintFor } from "./did-you-mean.js";
import { expandDeep } from "./expand-vars.js";
import { shortHash } from "./config-hash.js";
import { readItemFilters } from "./filter-config.js";
import { readMcpdOptions, resolveMcpdOptions, type McpdOptions } from "./server-options.js";
import { readAuthConfig, type AuthConfig } from "./auth-config.js";

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

type TransportType = "stdio" | "http" | "sse" | "ws";

/** `type` spellings other tools use, mapped to mcpd's four. */
const TYPE_ALIASES: Readonly<Record<string, TransportType>> = {
  stdio: "stdio",
  http: "http",
  sse: "sse",
  ws: "ws",
  // Claude Code and server-everything say "streamable-http"/"streamableHttp" for what MCP calls Streamable HTTP.
  "streamable-http": "http",
  streamableHttp: "http",
  streamable_http: "http",
  websocket: "ws",
};

const KNOWN_KEYS: readonly string[] = [...TRANSPORT_KEYS, ...MCPD_SERVER_KEYS, ...FILTER_KINDS, "auth"];
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_NAME = /^[^=\0]+$/;

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
  if (!isPlainObject(raw)) {
    issues.error(where, `must be an object with "command" (a local process) or "url" (a remote server), got ${describeValue(raw)}`);
    return undefined;
  }

  for (const key of Object.keys(raw)) {
    if (KNOWN_KEYS.includes(key) || (FOREIGN_SERVER_KEYS as readonly string[]).includes(key)) continue;
    if (key === "envFile") {
      issues.warn(where, `"envFile" is not supported and is ignored; list the variables in "env" (values may use \${VAR})`);
      continue;
    }
    issues.warn(where, `unknown key "${key}" ignored${hintFor(key, KNOWN_KEYS, RENAMED_KEYS)}`);
  }

  const options = readMcpdOptions(raw, { issues, where, homedir: ctx.homedir });
  if (raw.disabled !== undefined) {
    // Cline and Roo write "disabled": true; honour it unless it contradicts "enabled".
    if (typeof raw.disabled !== "boolean") {
      issues.error(where, `"disabled" must be true or false, got ${describeValue(raw.disabled)}`);
    } else if (options.enabled !== undefined && options.enabled === raw.disabled) {
      issues.error(where, `"enabled": ${options.enabled} contradicts "disabled": ${raw.disabled}; keep one of them`);
    } else {
      options.enabled ??= !raw.disabled;
    }
  }
  const resolved = resolveMcpdOptions(options, ctx.defaults, { issues, where, homedir: ctx.homedir });
  const filters = readItemFilters(raw, "", where, issues);

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
    } else if (resolved.enabled) {
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
  const entry = expanded.value as Record<string, unknown>;

  const transport = readTransport(
    entry,
    { ...ctx, where },
    resolved.timeout,
    resolved.envMode,
    raw.envMode !== undefined,
    unresolved.has("url"),
  );
  const auth = readServerAuth(entry.auth, transport, { ...ctx, where });
  if (!transport || auth === null || issues.errors.length > errorsBefore) return undefined;

  const { timeout: _ignored, ...transportIdentity } = transport;
  // `filters` only when set: a server without filters keeps the hash it had before filters existed.
  const body = {
    enabled: resolved.enabled,
    transport,
    ...withoutKeys(resolved, ["enabled", "envMode"]),
    ...(filters ? { filters } : {}),
    ...(auth === undefined ? {} : { auth }),
  };
  return {
    name,
    ...body,
    hash: shortHash(body),
    // The OAuth client is part of who the server is talking to (its tokens, its scopes); without one the
    // hash stays what it was before `auth` existed, so tool caches keep their keys.
    transportHash: shortHash(auth === undefined ? transportIdentity : { ...transportIdentity, auth }),
  };
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

function readTransport(
  entry: Record<string, unknown>,
  ctx: ServerContext & { where: string },
  timeout: number,
  envMode: "inherit" | "allowlist",
  envModeGiven: boolean,
  /** The url holds a variable that is unset here (reported already): what it becomes cannot be judged. */
  urlUnresolved = false,
): TransportConfig | undefined {
  const { issues, where } = ctx;
  let type: TransportType | undefined;
  if (entry.type !== undefined) {
    type = typeof entry.type === "string" && Object.hasOwn(TYPE_ALIASES, entry.type) ? TYPE_ALIASES[entry.type] : undefined;
    if (type === undefined) {
      const hint = typeof entry.type === "string" ? hintFor(entry.type, Object.keys(TYPE_ALIASES)) : "";
      issues.error(
        where,
        `"type" must be one of "stdio", "http", "sse", "ws" (or "streamable-http"), got ${describeValue(entry.type)}${hint}`,
      );
      return undefined;
    }
  }
  const hasCommand = entry.command !== undefined;
  const hasUrl = entry.url !== undefined;
  if (hasCommand && hasUrl) {
    issues.error(where, `has both "command" and "url"; give exactly one ("command" for a local process, "url" for a remote server)`);
    return undefined;
  }
  if (!hasCommand && !hasUrl) {
    issues.error(where, `needs "command" (a local process) or "url" (a remote server)`);
    return undefined;
  }
  if (type === "stdio" && !hasCommand) {
    issues.error(where, `"type" is "stdio" but there is no "command" (remote servers use "type": "http", "sse" or "ws")`);
    return undefined;
  }
  if (type !== undefined && type !== "stdio" && hasCommand) {
    issues.error(where, `"type" is "${entry.type as string}" but it has "command" instead of "url"`);
    return undefined;
  }

  if (hasCommand) {
    for (const key of ["url", "headers"] as const) {
      if (entry[key] !== undefined) issues.warn(where, `"${key}" is ignored for a stdio server`);
    }
    const command = entry.command;
    if (typeof command !== "string" || command.trim() === "") {
      issues.error(where, `"command" must be a non-empty string, got ${describeValue(command)}`);
    }
    const args = readArgs(entry.args, ctx);
    const env = readRecord(entry.env, "env", ENV_NAME, ctx);
    const cwd = readCwd(entry.cwd, ctx);
    if (typeof command !== "string" || !args || !env || cwd === null) return undefined;
    const stdio: TransportConfig = { type: "stdio", command, args, env, timeout, envMode };
    if (cwd !== undefined) stdio.cwd = cwd;
    return stdio;
  }

  for (const key of ["args", "env", "cwd"] as const) {
    if (entry[key] !== undefined) issues.warn(where, `"${key}" is ignored for a remote (url) server`);
  }
  if (envModeGiven) issues.warn(where, `"envMode" is ignored for a remote (url) server`);
  const url = entry.url;
  if (typeof url !== "string") {
    issues.error(where, `"url" must be a string, got ${describeValue(url)}`);
    return undefined;
  }
  if (urlUnresolved) {
    type ??= "http";
  } else {
    let protocol: string;
    try {
      protocol = new URL(url).protocol;
    } catch {
      issues.error(where, `"url" is not a valid URL: ${describeValue(url)}`);
      return undefined;
    }
    const isWs = protocol === "ws:" || protocol === "wss:";
    const isHttp = protocol === "http:" || protocol === "https:";
    type ??= isWs ? "ws" : "http";
    if (type === "ws" && !isWs) {
      issues.error(where, `"url" must start with ws:// or wss:// for "type": "ws", got "${protocol}//..."`);
      return undefined;
    }
    if (type !== "ws" && !isHttp) {
      issues.error(where, `"url" must start with http:// or https:// for "type": "${type}", got "${protocol}//..."`);
      return undefined;
    }
  }
  const headers = readRecord(entry.headers, "headers", HEADER_NAME, ctx);
  if (!headers) return undefined;
  // Header values with CR/LF would let a config smuggle extra headers; undici refuses them too late.
  for (const [key, value] of Object.entries(headers)) {
    if (/[\r\n\0]/.test(value)) issues.error(where, `"headers.${key}" must not contain line breaks`);
  }
  // type === "stdio" without a command returned above.
  return { type: type as "http" | "sse" | "ws", url, headers, timeout };
}

function readArgs(value: unknown, ctx: ServerContext & { where: string }): string[] | undefined {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    ctx.issues.error(ctx.where, `"args" must be an array of strings, got ${describeValue(value)}`);
    return undefined;
  }
  let ok = true;
  value.forEach((arg, index) => {
    if (typeof arg !== "string") {
      ctx.issues.error(
        ctx.where,
        `"args[${index}]" must be a string, got ${describeValue(arg)}${typeof arg === "number" ? ` (write "${arg}")` : ""}`,
      );
      ok = false;
    }
  });
  return ok ? (value as string[]) : undefined;
}

function readRecord(
  value: unknown,
  key: "env" | "headers",
  namePattern: RegExp,
  ctx: ServerContext & { where: string },
): Record<string, string> | undefined {
  if (value === undefined) return {};
  if (!isPlainObject(value)) {
    ctx.issues.error(ctx.where, `"${key}" must be an object of string values, got ${describeValue(value)}`);
    return undefined;
  }
  let ok = true;
  for (const [name, v] of Object.entries(value)) {
    if (!namePattern.test(name)) {
      ctx.issues.error(ctx.where, `"${key}" has an invalid name ${JSON.stringify(name)}`);
      ok = false;
    }
    if (typeof v !== "string") {
      // Never echo a value from env/headers: it may be a secret.
      const quoted = typeof v === "number" || typeof v === "boolean" ? " (put the value in quotes)" : "";
      ctx.issues.error(
        ctx.where,
        `"${key}.${name}" must be a string, got a ${v === null ? "null" : Array.isArray(v) ? "array" : typeof v}${quoted}`,
      );
      ok = false;
    }
  }
  return ok ? (Object.fromEntries(Object.entries(value)) as Record<string, string>) : undefined;
}

/** undefined = not given; null = invalid (reported). Relative paths resolve against the config file's directory. */
function readCwd(value: unknown, ctx: ServerContext & { where: string }): string | undefined | null {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "") {
    ctx.issues.error(ctx.where, `"cwd" must be a non-empty path, got ${describeValue(value)}`);
    return null;
  }
  if (value === "~" || value.startsWith("~/")) return path.join(ctx.homedir, value.slice(1));
  return path.resolve(ctx.baseDir, value);
}
