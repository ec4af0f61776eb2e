/**
 * A server entry's transport keys (`type`, `command`/`args`/`env`/`cwd` for a local process,
 * `url`/`headers` for a remote server), typed by the schema, checked for what goes together and read
 * into a {@link TransportConfig}.
 */
import path from "node:path";
import type { TransportConfig } from "@mcpd/transports";
import { describeValue, type ConfigIssues } from "./config-issues.js";
import { REDACTED } from "../secrets/index.js";
import { TRANSPORT_TYPE_ALIASES } from "./config-names.js";

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

/**
 * The transport keys after the schema checked them (server-entry-schema.ts: a string is a string, `args`
 * an array of strings, `env` and `headers` objects of strings with valid names) and their variables
 * were expanded.
 */
export interface TransportEntry {
  type?: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
}

/** The entry's transport, or undefined when its keys are invalid (reported to `ctx.issues`). */
export function readTransport(entry: TransportEntry, ctx: TransportContext, settings: TransportSettings): TransportConfig | undefined {
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
function readTransportType(entry: TransportEntry, ctx: TransportContext): TransportType | undefined | null {
  const { issues, where } = ctx;
  // The schema allowed only the spellings TRANSPORT_TYPE_ALIASES maps.
  const type = entry.type === undefined ? undefined : TRANSPORT_TYPE_ALIASES[entry.type];
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
    issues.error(where, `"type" is "${entry.type}" but it has "command" instead of "url"`);
    return null;
  }
  return type;
}

/** A local process: `command`, `args`, `env`, `cwd`. */
function readStdioTransport(entry: TransportEntry, ctx: TransportContext, settings: TransportSettings): TransportConfig | undefined {
  const { issues, where } = ctx;
  for (const key of ["url", "headers"] as const) {
    if (entry[key] !== undefined) issues.warn(where, `"${key}" is ignored for a stdio server`);
  }
  const command = entry.command ?? "";
  // The schema saw the text as written; a variable may have expanded to nothing.
  if (command.trim() === "") issues.error(where, `"command" must be a non-empty string, got ${describeValue(command)}`);
  const cwd = readCwd(entry.cwd, ctx);
  if (command.trim() === "" || cwd === null) return undefined;
  const { args = [], env = {} } = entry;
  const stdio: TransportConfig = { type: "stdio", command, args, env, timeout: settings.timeout, envMode: settings.envMode };
  if (cwd !== undefined) stdio.cwd = cwd;
  return stdio;
}

/** A remote server: `url` (its scheme decides `type` when none is written) and `headers`. */
function readRemoteTransport(
  entry: TransportEntry,
  written: RemoteType | undefined,
  ctx: TransportContext,
  settings: TransportSettings,
): TransportConfig | undefined {
  const { issues, where } = ctx;
  for (const key of ["args", "env", "cwd"] as const) {
    if (entry[key] !== undefined) issues.warn(where, `"${key}" is ignored for a remote (url) server`);
  }
  if (settings.envModeGiven) issues.warn(where, `"envMode" is ignored for a remote (url) server`);
  const url = entry.url ?? "";
  const type = settings.urlUnresolved ? (written ?? "http") : remoteType(url, written, ctx);
  if (type === undefined) return undefined;
  const headers = entry.headers ?? {};
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
    // Its credentials masked: the error reaches mcpd.log on reload.
    ctx.issues.error(ctx.where, `"url" is not a valid URL: ${describeValue(redactInvalidUrl(url))}`);
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

/**
 * A URL that does not parse, fit to print: everything before the last `@` of its authority (a user and
 * password, whatever they hold) and its query and fragment (which may hold a token) replaced by `***`.
 * Masks too much rather than too little, since no parser says where its parts are.
 */
function redactInvalidUrl(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0] ?? "";
  let rest = url.slice(scheme.length);
  const query = rest.search(/[?#]/);
  if (query !== -1) rest = `${rest.slice(0, query + 1)}${REDACTED}`;
  const at = (query === -1 ? rest : rest.slice(0, query)).lastIndexOf("@");
  return at === -1 ? scheme + rest : `${scheme}${REDACTED}${rest.slice(at)}`;
}

/** undefined = not given; null = invalid (reported). Relative paths resolve against the config file's directory. */
function readCwd(value: string | undefined, ctx: TransportContext): string | undefined | null {
  if (value === undefined) return undefined;
  if (value === "") {
    ctx.issues.error(ctx.where, `"cwd" must be a non-empty path, got ${describeValue(value)}`);
    return null;
  }
  if (value === "~" || value.startsWith("~/")) return path.join(ctx.homedir, value.slice(1));
  return path.resolve(ctx.baseDir, value);
}
