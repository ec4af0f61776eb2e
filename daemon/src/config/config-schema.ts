import type { ProtocolEraSetting } from "@mcpd/protocol";
import type { TransportConfig } from "@mcpd/transports";
import type { z } from "zod";
import type { AuthConfig } from "./auth-config.js";
import { LOG_LEVEL_VALUES } from "./config-names.js";
import type { HttpSettingsSchema, TelemetrySettingsSchema } from "./config-file-schema.js";
import type { MCPD_OPTIONS_SHAPE, NameFilterSchema, RestartSchema, RootSchema } from "./server-entry-schema.js";

export type { AuthConfig, ProtocolEraSetting };
export { LOG_LEVEL_VALUES, PROFILE_NAME_PATTERN, SERVER_NAME_PATTERN, TRANSPORT_TYPE_ALIASES } from "./config-names.js";

/**
 * The shape of a loaded, validated and fully resolved mcpd configuration. Every object reachable from a
 * {@link LoadedConfig} is deeply frozen at runtime. docs/configuration.md describes the file format.
 */

/*
 * The types of what the file holds are inferred from its zod schema (config-file-schema.ts,
 * server-entry-schema.ts): type-only imports, so importing these constants never loads zod.
 */

/** When a server starts: with the daemon (`eager`) or on first use (`lazy`). */
export type StartupMode = NonNullable<z.output<typeof MCPD_OPTIONS_SHAPE.startup>>;

/** `shared`: one upstream session serves every client. `per-client`: each client gets its own (stateful servers). */
export type SharingMode = NonNullable<z.output<typeof MCPD_OPTIONS_SHAPE.sharing>>;

/** `allowlist` (default): a minimal environment plus `env`. `inherit`: the daemon's whole environment plus `env`. */
export type EnvMode = NonNullable<z.output<typeof MCPD_OPTIONS_SHAPE.envMode>>;

/** The daemon's log levels (pino's). */
export type LogLevel = (typeof LOG_LEVEL_VALUES)[number];

/** Restart backoff and crash-loop breaker of one server, every key resolved. All durations in ms. */
export type RestartPolicy = Readonly<Required<z.output<typeof RestartSchema>>>;

/** A root mcpd answers `roots/list` with when no connected client can: a `file://` URI and an optional name. */
export type RootConfig = Readonly<z.output<typeof RootSchema>>;

/**
 * `include` / `exclude` globs over names (or URIs): `*` matches any run of characters, `?` one character,
 * `\` makes the next character literal; everything else matches itself, case-sensitively, and a glob
 * must match the whole name. docs/configuration.md, *Tool selection*.
 */
export type NameFilterSpec = ReadonlyLists<z.output<typeof NameFilterSchema>>;

/** `T` with read-only keys and read-only arrays (what the loaded, frozen config holds). */
type ReadonlyLists<T> = { readonly [K in keyof T]: NonNullable<T[K]> extends (infer U)[] ? readonly U[] | Exclude<T[K], U[]> : T[K] };

/** What one server, or one profile, filters: its tools, prompts and resources. Absent keys filter nothing. */
export type ItemFilters = { readonly [K in (typeof FILTER_KINDS)[number]]?: NameFilterSpec };

/** The kinds of item a filter applies to, in the order they are checked and reported. */
export const FILTER_KINDS = ["tools", "prompts", "resources"] as const;

/** One profile (`mcpd.profiles.<name>`): a named view over the aggregate view that a connection selects. */
export interface ProfileSpec extends ItemFilters {
  /** Only these configured servers; absent: every server. */
  readonly servers?: readonly string[];
  /** Search mode of the views that select it (docs/tool-search.md); absent: `off`. */
  readonly toolSearch?: ToolSearchSetting;
}

export { TOOL_SEARCH_MODES } from "./config-names.js";
export type ToolSearchMode = typeof import("./config-names.js").TOOL_SEARCH_MODES[number];

/** A profile's `toolSearch`: `"on"`, or `{"mode": "auto", "autoThreshold": 60, "callTool": true}`. */
export interface ToolSearchSetting {
  readonly mode: ToolSearchMode;
  /** `auto`: search mode when the view would list more tools than this. Default CONFIG_DEFAULTS.toolSearch.autoThreshold. */
  readonly autoThreshold?: number;
  /** Also list `call_tool`. Default false. */
  readonly callTool?: boolean;
}

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
   * The MCP era mcpd speaks to the server: `2025` (`initialize` first), `2026` (no handshake: a
   * `server/discover`, then every request with its `_meta` envelope) or `auto` (default: probed with
   * `server/discover` on the first start, the answer remembered per config).
   */
  readonly protocolEra: ProtocolEraSetting;
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

/** `mcpd.http`: the HTTP front end (MCP over Streamable HTTP and legacy SSE, on loopback), every key resolved. */
export type HttpSettings = ReadonlyLists<Required<z.output<typeof HttpSettingsSchema>>>;

/** `mcpd.telemetry.otlp`: span export over OTLP/HTTP, every key resolved (defaults: `CONFIG_DEFAULTS.telemetryOtlp`). */
export type OtlpSettings = Readonly<Required<NonNullable<z.output<typeof TelemetrySettingsSchema>["otlp"]>>>;

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
  /** `input_required` rounds mcpd runs for one call of a 2025-era client. Default `CONFIG_DEFAULTS.maxInputRounds` (8). */
  readonly maxInputRounds?: number;
  /** Lifetime of a `requestState` mcpd issues to a 2026-era client, in ms. Default `CONFIG_DEFAULTS.requestStateTtlMs` (60000). */
  readonly requestStateTtlMs?: number;
  /** `mcpd.profiles`: named views a connection selects (`mcpd/select {"profile": NAME}`). Default none. */
  readonly profiles?: Readonly<Record<string, ProfileSpec>>;
  /** `mcpd.telemetry`: span export; absent (or without `otlp`): none. */
  readonly telemetry?: { readonly otlp?: OtlpSettings };
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
  era: "protocolEra",
  protocolVersion: "protocolEra",
};

/** The log levels accepted in `mcpd.logLevel`. */
export const LOG_LEVELS: readonly LogLevel[] = LOG_LEVEL_VALUES;
