import type { TransportConfig } from "@mcpd/transports";
import type { AuthConfig } from "./auth-config.js";

export type { AuthConfig };

/**
 * The shape of a loaded, validated and fully resolved mcpd configuration. Every object reachable from a
 * {@link LoadedConfig} is deeply frozen at runtime. docs/configuration.md describes the file format.
 */

/** When a server starts: with the daemon (`eager`) or on first use (`lazy`). */
export type StartupMode = "eager" | "lazy";

/** `shared`: one upstream session serves every client. `per-client`: each client gets its own (stateful servers). */
export type SharingMode = "shared" | "per-client";

/** `allowlist` (default): a minimal environment plus `env`. `inherit`: the daemon's whole environment plus `env`. */
export type EnvMode = "inherit" | "allowlist";

/** The daemon's log levels (pino's). */
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

/** Restart backoff and crash-loop breaker of one server. All durations in ms. */
export interface RestartPolicy {
  /** Restarts allowed within `windowMs` before the server is marked failed. Default 5. */
  readonly maxRestarts: number;
  /** Sliding window for counting restarts, in ms. Default 60000. */
  readonly windowMs: number;
  /** Delay before the first restart, in ms. Default 500. */
  readonly initialDelayMs: number;
  /** Largest delay between restarts, in ms. Default 30000. */
  readonly maxDelayMs: number;
}

/** A root mcpd answers `roots/list` with when no connected client can. */
export interface RootConfig {
  /** A `file://` URI. */
  readonly uri: string;
  readonly name?: string;
}

/**
 * `include` / `exclude` globs over names (or URIs): `*` matches any run of characters, `?` one character,
 * `\` makes the next character literal; everything else matches itself, case-sensitively, and a glob
 * must match the whole name. docs/configuration.md, *Tool selection*.
 */
export interface NameFilterSpec {
  /** Only the names one of these globs matches; absent: every name. */
  readonly include?: readonly string[];
  /** The names one of these globs matches are hidden, included or not. */
  readonly exclude?: readonly string[];
}

/** What one server, or one profile, filters: its tools, prompts and resources. Absent keys filter nothing. */
export interface ItemFilters {
  /** Over tool names: a server's own names (server filters), the aggregate view's names (profiles). */
  readonly tools?: NameFilterSpec;
  /** Over prompt names, like `tools`. */
  readonly prompts?: NameFilterSpec;
  /** Over resource URIs and URI templates: the server's own, or their `mcpd://<server>/` form. */
  readonly resources?: NameFilterSpec;
}

/** The kinds of item a filter applies to, in the order they are checked and reported. */
export const FILTER_KINDS = ["tools", "prompts", "resources"] as const;

/** One profile (`mcpd.profiles.<name>`): a named view over the aggregate view that a connection selects. */
export interface ProfileSpec extends ItemFilters {
  /** Only these configured servers; absent: every server. */
  readonly servers?: readonly string[];
  /** Search mode of the views that select it (docs/tool-search.md); absent: `off`. */
  readonly toolSearch?: ToolSearchSetting;
}

/** The modes of tool search: list the tools, list `search_tools` instead, or that past a number of tools. */
export const TOOL_SEARCH_MODES = ["off", "on", "auto"] as const;
export type ToolSearchMode = (typeof TOOL_SEARCH_MODES)[number];

/** A profile's `toolSearch`: `"on"`, or `{"mode": "auto", "autoThreshold": 60, "callTool": true}`. */
export interface ToolSearchSetting {
  readonly mode: ToolSearchMode;
  /** `auto`: search mode when the view would list more tools than this. Default CONFIG_DEFAULTS.toolSearch.autoThreshold. */
  readonly autoThreshold?: number;
  /** Also list `call_tool`. Default false. */
  readonly callTool?: boolean;
}

/** Profile names: like server names (they appear in paths such as `/profiles/<name>/mcp`). */
export const PROFILE_NAME_PATTERN = /^[A-Za-z0-9_-]{1,48}$/;

/** Keys of a profile. */
export const PROFILE_KEYS = ["servers", ...FILTER_KINDS, "toolSearch"] as const;

/** One server, validated, with every variable expanded and every default applied. */
export interface ResolvedServerConfig {
  /** The key in `mcpServers`/`servers`; matches {@link SERVER_NAME_PATTERN}. */
  readonly name: string;
  /** false: known but never started. Default true. */
  readonly enabled: boolean;
  /**
   * What the transport layer needs: `type` is always set (`stdio`, `http`, `sse` or `ws`); stdio configs
   * always carry `args`, `env` and `envMode`; http/sse/ws configs always carry `headers`; `timeout` is set.
   * Typed mutable so it can be handed to the transports as is, but frozen at runtime.
   */
  readonly transport: TransportConfig;
  /** Request deadline, in ms. Default 30000. */
  readonly timeout: number;
  /** Ceiling of a request's life when progress keeps restarting `timeout`, in ms. Default 300000. */
  readonly maxTotalTimeout: number;
  /** Default `eager`. */
  readonly startup: StartupMode;
  /** Stop after this long without use, in ms; 0 = never. Default 0. */
  readonly idleTimeout: number;
  /** Requests in flight to this server at a time. Default 64. */
  readonly maxConcurrency: number;
  /** Requests allowed to wait for a slot; more are refused with MCPD_QUEUE_FULL. Default 10000. */
  readonly maxQueue: number;
  readonly restart: RestartPolicy;
  /** Default `shared`. */
  readonly sharing: SharingMode;
  /** Ping interval, in ms; 0 disables health checks. Default 30000. */
  readonly healthCheckIntervalMs: number;
  /** Answered for `roots/list` when no client can. Default none. */
  readonly roots: readonly RootConfig[];
  /**
   * The server's `tools`, `prompts` and `resources` filters, over its own names: what they hide, no
   * client sees (aggregate or transparent view). Absent when the entry sets none.
   */
  readonly filters?: ItemFilters;
  /**
   * http/sse only: the OAuth client settings (`auth` in the file), `false` when OAuth is turned off;
   * absent when not written (OAuth with defaults, unless an `Authorization` header is configured).
   */
  readonly auth?: AuthConfig | false;
  /**
   * The level of this server's lines in the daemon's log (its transport's, its supervision's); absent when
   * the file sets none (here or in `mcpd.defaults`): the daemon's own level, followed as `mcpd reload`
   * changes it.
   */
  readonly logLevel?: LogLevel;
  /**
   * sha256 (first 16 hex digits) of this resolved config without `name`, `hash` and `transportHash`:
   * equal hashes mean nothing about the server changed. Used to diff on reload.
   */
  readonly hash: string;
  /**
   * sha256 (first 16 hex digits) of `transport` without `timeout`: what decides which process or endpoint
   * this is, and so which tools it serves. Keys the tool cache.
   */
  readonly transportHash: string;
}

/** `mcpd.http`: the HTTP front end (MCP over Streamable HTTP and legacy SSE, on loopback). */
export interface HttpSettings {
  /** Serve at all. Default true. */
  readonly enabled: boolean;
  /** TCP port; 0 = any free port. Default `CONFIG_DEFAULTS.http.port` (7767); `MCPD_HTTP_PORT` overrides it. */
  readonly port: number;
  /** Address to listen on. Default `127.0.0.1` (with `::1` on the same port). Anything not loopback needs `allowRemote`. */
  readonly host: string;
  /** Allow a `host` that is not a loopback address (the bearer token is required either way). Default false. */
  readonly allowRemote: boolean;
  /** Host names accepted in `Host`/`Origin` besides the loopback names. Default none. */
  readonly allowedHosts: readonly string[];
  /** Sessions open at once (Streamable HTTP and legacy SSE); the next initialize gets 503. Default 256. */
  readonly maxSessions: number;
  /** A Streamable HTTP session with nothing under way this long ends, in ms. Default 1800000 (30 min). */
  readonly sessionIdleMs: number;
  /** A call that may run long and is not answered within this many ms is answered on SSE, in ms (0: always). Default 50. */
  readonly streamAfterMs: number;
  /** A request's headers and body must arrive within this many ms; past it 408 and the connection closes. Default 30000. */
  readonly requestTimeoutMs: number;
}

/** The optional top-level `"mcpd"` section. The optional keys are present only when the file sets them. */
export interface DaemonSettings {
  /** Default `info`. */
  readonly logLevel: LogLevel;
  /** The HTTP front end; every key has its default when the file does not set it. */
  readonly http: HttpSettings;
  /** Client connections accepted at once. Default `RUNTIME_DEFAULTS.maxConnections` (4096), lowered to fit the open-file limit. */
  readonly maxConnections?: number;
  /** Open files kept free besides the servers' share. Default `RUNTIME_DEFAULTS.fdReserve` (64). */
  readonly fdReserve?: number;
  /** Bytes held for all clients together (unfinished lines, unsent output). Default `RUNTIME_DEFAULTS.maxBufferedBytesTotal` (128 MiB). */
  readonly maxBufferedBytesTotal?: number;
  /** A client's line must be finished within this many ms of its first byte. Default `RUNTIME_DEFAULTS.partialLineTimeoutMs` (30000). */
  readonly partialLineTimeoutMs?: number;
  /** `mcpd.profiles`: named views a connection selects (`mcpd/select {"profile": NAME}`). Default none. */
  readonly profiles?: Readonly<Record<string, ProfileSpec>>;
}

/** The result of {@link loadConfig}/{@link parseConfig}. Deeply frozen. */
export interface LoadedConfig {
  /** Absolute path of the file read (or that would have been read, for `source: "none"`). */
  readonly file: string;
  /** `file`: the file existed and was parsed. `none`: there was no file; zero servers. */
  readonly source: "file" | "none";
  /** In file order: `mcpServers` first, then `servers`. */
  readonly servers: readonly ResolvedServerConfig[];
  readonly settings: DaemonSettings;
  /** Problems that did not stop loading (unknown keys, duplicates, ignored keys), one sentence each. */
  readonly warnings: readonly string[];
}

/** Server names: letters, digits, `_` and `-`, 1 to 48 characters (tool names get `<server>_` prefixes). */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,48}$/;

/** Keys that describe how to reach a server (the format Claude Desktop/Code, Cursor and VS Code share). */
export const TRANSPORT_KEYS = ["type", "command", "args", "env", "cwd", "url", "headers"] as const;

/** mcpd's own per-server keys; all optional. The same keys are accepted in `mcpd.defaults`. */
export const MCPD_SERVER_KEYS = [
  "enabled",
  "timeout",
  "maxTotalTimeout",
  "startup",
  "idleTimeout",
  "maxConcurrency",
  "maxQueue",
  "restart",
  "sharing",
  "healthCheckIntervalMs",
  "roots",
  "envMode",
  "logLevel",
] as const;

/** Keys of a `restart` object. */
export const RESTART_KEYS = ["maxRestarts", "windowMs", "initialDelayMs", "maxDelayMs"] as const;

/** Keys of the top-level `mcpd` section. */
export const SETTINGS_KEYS = [
  "logLevel",
  "defaults",
  "maxConnections",
  "fdReserve",
  "maxBufferedBytesTotal",
  "partialLineTimeoutMs",
  "http",
  "profiles",
] as const;

/** Top-level keys. `inputs` (VS Code prompts) and `$schema` are accepted and ignored. */
export const TOP_LEVEL_KEYS = ["mcpServers", "servers", "mcpd", "inputs", "$schema"] as const;

/**
 * Per-server keys other tools write that mcpd accepts without a warning and ignores (Cline/Roo's
 * approval lists, VS Code's `dev` and gallery metadata, descriptions). `disabled` (Cline) is honoured.
 */
export const FOREIGN_SERVER_KEYS = ["disabled", "autoApprove", "alwaysAllow", "description", "dev", "gallery", "version"] as const;

/** Keys users plausibly write for an mcpd key under another name: the hint names the right one. */
export const RENAMED_KEYS: Readonly<Record<string, string>> = {
  timeoutMs: "timeout",
  requestTimeout: "timeout",
  maxTotalTimeoutMs: "maxTotalTimeout",
  idleTimeoutMs: "idleTimeout",
  healthCheckInterval: "healthCheckIntervalMs",
  concurrency: "maxConcurrency",
  queue: "maxQueue",
  transport: "type",
  environment: "env",
  arguments: "args",
  workingDirectory: "cwd",
  serverUrl: "url",
  lazy: "startup",
};

/** The log levels accepted in `mcpd.logLevel`. */
export const LOG_LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];
