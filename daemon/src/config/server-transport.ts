/**
 * A server entry's transport keys (`type`, `command`/`args`/`env`/`cwd` for a local process,
 * `url`/`headers` for a remote server) checked and read into a {@link TransportConfig}.
 */
import path from "node:path";
import type { TransportConfig } from "@mcpd/transports";
import { describeValue, isPlainObject, type ConfigIssues } from "./config-issues.js";
import { hintFor } from "./did-you-mean.js";

/** Where to report, and how to resolve `~` and a relative `cwd` (the config file's directory). */
export interface TransportContext {
  issues: ConfigIssues;
  /** `server "github"`. */
  where: string;
  baseDir: string;
  homedir: string;
}

/** What the entry's other keys decided for its transport. */
export interface TransportSettings {
  timeout: number;
  envMode: "inherit" | "allowlist";
  /** `envMode` was written in the entry (it is then ignored, with a warning, for a remote server). */
  envModeGiven: boolean;
  /** The url holds a variable that is unset here (reported already): what it becomes cannot be judged. */
  urlUnresolved: boolean;
}

type TransportType = "stdio" | "http" | "sse" | "ws";
type RemoteType = Exclude<TransportType, "stdio">;

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

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_NAME = /^[^=\0]+$/;

/** The entry's transport, or undefined when its keys are invalid (reported to `ctx.issues`). */
export function readTransport(
  entry: Record<string, unknown>,
  ctx: TransportContext,
  settings: TransportSettings,
): TransportConfig | undefined {
  const type = readTransportType(entry, ctx);
  if (type === null) return undefined;
  if (entry.command !== undefined) return readStdioTransport(entry, ctx, settings);
  // A url with "type": "stdio" was refused by readTransportType.
  return readRemoteTransport(entry, type as RemoteType | undefined, ctx, settings);
}

/**
 * The entry's `type` (undefined when not written), checked against which of `command` and `url` it has;
 * null when they disagree or neither or both are given (reported).
 */
function readTransportType(entry: Record<string, unknown>, ctx: TransportContext): TransportType | undefined | null {
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
      return null;
    }
  }
  const hasCommand = entry.command !== undefined;
  const hasUrl = entry.url !== undefined;
  if (hasCommand && hasUrl) {
    issues.error(where, `has both "command" and "url"; give exactly one ("command" for a local process, "url" for a remote server)`);
    return null;
  }
  if (!hasCommand && !hasUrl) {
    issues.error(where, `needs "command" (a local process) or "url" (a remote server)`);
    return null;
  }
  if (type === "stdio" && !hasCommand) {
    issues.error(where, `"type" is "stdio" but there is no "command" (remote servers use "type": "http", "sse" or "ws")`);
    return null;
  }
  if (type !== undefined && type !== "stdio" && hasCommand) {
    issues.error(where, `"type" is "${entry.type as string}" but it has "command" instead of "url"`);
    return null;
  }
  return type;
}

/** A local process: `command`, `args`, `env`, `cwd`. */
function readStdioTransport(
  entry: Record<string, unknown>,
  ctx: TransportContext,
  settings: TransportSettings,
): TransportConfig | undefined {
  const { issues, where } = ctx;
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
  const stdio: TransportConfig = { type: "stdio", command, args, env, timeout: settings.timeout, envMode: settings.envMode };
  if (cwd !== undefined) stdio.cwd = cwd;
  return stdio;
}

/** A remote server: `url` (its scheme decides `type` when none is written) and `headers`. */
function readRemoteTransport(
  entry: Record<string, unknown>,
  written: RemoteType | undefined,
  ctx: TransportContext,
  settings: TransportSettings,
): TransportConfig | undefined {
  const { issues, where } = ctx;
  for (const key of ["args", "env", "cwd"] as const) {
    if (entry[key] !== undefined) issues.warn(where, `"${key}" is ignored for a remote (url) server`);
  }
  if (settings.envModeGiven) issues.warn(where, `"envMode" is ignored for a remote (url) server`);
  const url = entry.url;
  if (typeof url !== "string") {
    issues.error(where, `"url" must be a string, got ${describeValue(url)}`);
    return undefined;
  }
  const type = settings.urlUnresolved ? (written ?? "http") : remoteType(url, written, ctx);
  if (type === undefined) return undefined;
  const headers = readRecord(entry.headers, "headers", HEADER_NAME, ctx);
  if (!headers) return undefined;
  // Header values with CR/LF would let a config smuggle extra headers; undici refuses them too late.
  for (const [key, value] of Object.entries(headers)) {
    if (/[\r\n\0]/.test(value)) issues.error(where, `"headers.${key}" must not contain line breaks`);
  }
  return { type, url, headers, timeout: settings.timeout };
}

/** The remote type the url's scheme allows: the written one if it fits, else `ws` or `http`; undefined when not (reported). */
function remoteType(url: string, written: RemoteType | undefined, ctx: TransportContext): RemoteType | undefined {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    ctx.issues.error(ctx.where, `"url" is not a valid URL: ${describeValue(url)}`);
    return undefined;
  }
  const isWs = protocol === "ws:" || protocol === "wss:";
  const isHttp = protocol === "http:" || protocol === "https:";
  const type = written ?? (isWs ? "ws" : "http");
  if (type === "ws" && !isWs) {
    ctx.issues.error(ctx.where, `"url" must start with ws:// or wss:// for "type": "ws", got "${protocol}//..."`);
    return undefined;
  }
  if (type !== "ws" && !isHttp) {
    ctx.issues.error(ctx.where, `"url" must start with http:// or https:// for "type": "${type}", got "${protocol}//..."`);
    return undefined;
  }
  return type;
}

function readArgs(value: unknown, ctx: TransportContext): string[] | undefined {
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
  ctx: TransportContext,
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
function readCwd(value: unknown, ctx: TransportContext): string | undefined | null {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "") {
    ctx.issues.error(ctx.where, `"cwd" must be a non-empty path, got ${describeValue(value)}`);
    return null;
  }
  if (value === "~" || value.startsWith("~/")) return path.join(ctx.homedir, value.slice(1));
  return path.resolve(ctx.baseDir, value);
}
