/**
 * The shapes of mcpd's control protocol (the `mcpd/*` methods of docs/protocol.md): declared here once
 * for the daemon that answers them, the client SDK that asks and the `mcpd` command that prints them.
 * Each object type has its {@link Fields} beside it, checked against it by the compiler.
 */
import type { HttpFrontStatus } from "./http-front-status.js";
import type { JsonObject, Prompt, Resource, ResourceTemplate, Tool } from "../types.js";
import type { Fields } from "./fields.js";

/** A server's lifecycle states, in the order a start goes through them first. */
export const SERVER_STATES = ["stopped", "starting", "ready", "restarting", "needs-auth", "failed", "disabled"] as const;

/** A server's lifecycle state in the daemon (docs/supervision.md). */
export type ServerState = (typeof SERVER_STATES)[number];

/** How a server is reached, as configured (`type` of its config entry; `stdio` when it has a command). */
export type ServerTransportType = "stdio" | "http" | "sse" | "ws";

/** The wire mode of a running transport: `legacy-sse` is MCP 2024-11-05's HTTP+SSE (also after a fallback). */
export type TransportMode = "stdio" | "streamable-http" | "legacy-sse" | "websocket";

/** Params of a method that takes none. Anything sent is ignored. */
export type NoParams = Record<string, never>;

/** Params of a method that may be narrowed to one server. */
export interface ServerFilter {
  /** A configured server's name; every server when left out. */
  server?: string;
}

/** Params of a method about one server. */
export interface ServerParams {
  /** A configured server's name (-32602 listing the configured ones when unknown). */
  server: string;
}

// ---- mcpd/select ----

/**
 * Which part of the view a connection sees: a profile of the config (`mcpd.profiles.<name>`) and/or a
 * one-off list of tool globs over the aggregate view's names (`*` any run of characters, `?` one, `\`
 * escapes the next). Both: what both allow. Neither: everything.
 */
export interface ViewSelection {
  /** A profile's name (-32602 `MCPD_UNKNOWN_PROFILE`, listing the configured ones, when there is none). */
  profile?: string;
  /** Tool globs, such as `["github__*", "*__search"]`: only the tools one of them matches. */
  tools?: string[];
}

/** Params of `mcpd/select`, the first message of a connection, before `initialize`. */
export interface SelectParams extends ViewSelection {
  /** A server's name: its transparent view. Left out: the aggregate view. */
  server?: string;
  /** Also receive `notifications/mcpd/serverState`. */
  events?: boolean;
  /** `true`: a control connection. Only in a connection's first message (else -32071 `MCPD_FORBIDDEN`). */
  control?: boolean;
}

/** Result of `mcpd/select`. */
export interface SelectResult extends ViewSelection {
  view: "aggregate" | "server";
  /** The server of a transparent view. */
  server?: string;
  /** Present (true) on a control connection. */
  control?: true;
}

export const SELECT_RESULT_FIELDS: Fields<SelectResult> = {
  view: "required",
  server: "optional",
  control: "optional",
  profile: "optional",
  tools: "optional",
};

/** Params of `mcpd/tools`: one server's tools, or what a profile or tool globs select (the asking connection's own selection when neither is given). */
export interface ToolsParams extends ServerFilter, ViewSelection {}

// ---- mcpd/servers ----

/** One entry of `mcpd/servers`. */
export interface ServerSummary {
  name: string;
  state: ServerState;
  enabled: boolean;
  transport: ServerTransportType;
  /** The running transport's wire mode; null while the server has no session. */
  mode: TransportMode | null;
  /** Number of tools the server exposes (the cached list while it starts). */
  tools: number;
}

export const SERVER_SUMMARY_FIELDS: Fields<ServerSummary> = {
  name: "required",
  state: "required",
  enabled: "required",
  transport: "required",
  mode: "required",
  tools: "required",
};

/** Result of `mcpd/servers`: the configured servers. */
export interface ServersResult {
  servers: ServerSummary[];
}

// ---- mcpd/status ----

/** Request latency percentiles over a bounded recent sample, in ms; null before the first request. */
export interface LatencyMs {
  p50: number | null;
  p99: number | null;
}

/** One server in `mcpd/status`. Durations in ms, times ISO 8601. */
export interface ServerStatus extends ServerSummary {
  /** Why the server is in its state (e.g. `crash loop: 5 restarts in 60000ms`); may be empty. */
  stateReason: string;
  /** Its process, as soon as it is spawned (also while `starting`); null for a remote server or none. */
  pid: number | null;
  startedAt: string | null;
  /** Time since it became ready; null unless `ready`. */
  uptimeMs: number | null;
  restarts: number;
  requests: number;
  errors: number;
  inFlight: number;
  latencyMs: LatencyMs;
  /** The last request error or exit; always null in a restricted status. */
  lastError: string | null;
  /** The last stderr line; always null in a restricted status. */
  lastStderr: string | null;
  /** Whether a stdio server's command resolves on the daemon's PATH; null for a remote server. */
  commandFound: boolean | null;
  /** Private (`sharing: "per-client"`) sessions of this server. */
  sessions: number;
  /** Advice about the server (e.g. use `sharing: "per-client"` for sampling with several agents), or null. */
  hint: string | null;
}

export const SERVER_STATUS_FIELDS: Fields<ServerStatus> = {
  ...SERVER_SUMMARY_FIELDS,
  stateReason: "required",
  pid: "required",
  startedAt: "required",
  uptimeMs: "required",
  restarts: "required",
  requests: "required",
  errors: "required",
  inFlight: "required",
  latencyMs: { presence: "required", fields: { p50: "required", p99: "required" } },
  lastError: "required",
  lastStderr: "required",
  commandFound: "required",
  sessions: "required",
  hint: "required",
};

/** One connection in `mcpd/status`. */
export interface ClientStatus {
  /** The daemon's id for the connection (`c<N>`). */
  id: string;
  view: "aggregate" | "server";
  /** The server of a transparent view, else null. */
  server: string | null;
  /** The profile it selected (`mcpd.profiles.<name>`), else null. */
  profile: string | null;
  /** The one-off tool globs it selected, else null. */
  tools: string[] | null;
  /** The `clientInfo` its `initialize` sent (a huge one cut down to string name/version/title); null before. */
  clientInfo: JsonObject | null;
  inFlight: number;
  connectedAt: string;
  /** How it reached the daemon: the Unix socket, Streamable HTTP, or the legacy HTTP+SSE transport. */
  face?: ClientFace;
}

/** How a client reached the daemon. */
export type ClientFace = "socket" | "http" | "sse";

export const CLIENT_STATUS_FIELDS: Fields<ClientStatus> = {
  id: "required",
  view: "required",
  server: "required",
  profile: "required",
  tools: "required",
  clientInfo: "required",
  inFlight: "required",
  connectedAt: "required",
  face: "optional",
};

/** How writing the daemon's log is going. */
export interface LogWriteStatus {
  /** Lines that could not be written (full disk, I/O error, quota, closed stream) since the daemon started. */
  droppedLines: number;
  /** The last write error (`ENOSPC: no space left on device, write`), or null if there was none. */
  lastError: string | null;
  /** When it happened (ISO 8601), or null. */
  lastErrorAt: string | null;
  /** Whether the last write failed: lines are being dropped now. */
  failing: boolean;
}

/** The watch on the socket file: a removed or replaced socket file is re-created. */
export interface SocketWatchStatus {
  path: string;
  /** Times the socket file was re-created. */
  recreated: number;
  /** The last problem seen, or null. */
  lastProblem: string | null;
  /** When (ISO 8601), or null. */
  lastProblemAt: string | null;
}

/** The daemon itself in `mcpd/status` on a control connection. */
export interface DaemonInfo {
  pid: number;
  version: string;
  startedAt: string;
  uptimeMs: number;
  socketPath: string;
  pidFile: string;
  /** The config file read (or that would be read: see `configSource`). */
  configFile: string;
  /** `none` when the config file does not exist (no servers). */
  configSource: "file" | "none";
  /** Null while logging to stderr (in the foreground, until stderr fails). */
  logFile: string | null;
  log: LogWriteStatus;
  /** Open socket connections. */
  connections: number;
  /** Connections accepted at once: `mcpd.maxConnections`, or fewer when the open-file limit is low. */
  maxConnections: number;
  /** Bytes held for all clients now: unfinished input lines plus unsent output. */
  bufferedBytes: number;
  /** The daemon-wide budget for {@link DaemonInfo.bufferedBytes} (`mcpd.maxBufferedBytesTotal`). */
  maxBufferedBytesTotal: number;
  /** `mcpd.partialLineTimeoutMs`: a client's line must end within this many ms of its first byte. */
  partialLineTimeoutMs: number;
  /** Connections refused or closed by the daemon's limits since it started, by reason. */
  dropped: DroppedConnections;
  socket: SocketWatchStatus;
}

/** Connections refused or closed by the daemon's limits, by reason. */
export interface DroppedConnections {
  /** Refused: over the connection cap. */
  tooManyConnections: number;
  /** Closed holding the most when the daemon-wide buffer budget ran out. */
  overBudget: number;
  /** Closed with a line unfinished past the deadline. */
  lineTimeout: number;
  /** Closed with more unsent output than one connection may hold (it stopped reading). */
  notReading: number;
}

/** The daemon itself in a restricted `mcpd/status`: no paths. */
export type RestrictedDaemonInfo = Pick<DaemonInfo, "pid" | "version" | "startedAt" | "uptimeMs">;

/** The daemon's routing tables: entries in each, and progress notifications dropped since the start. */
export interface RouterTables {
  progress: number;
  progressDropped: number;
  subscriptions: number;
  relayed: number;
  inFlight: number;
}

/** Result of `mcpd/status` on a control connection. */
export interface DaemonStatus {
  /** Never true here: see {@link RestrictedDaemonStatus}. */
  restricted?: false;
  daemon: DaemonInfo;
  servers: ServerStatus[];
  /** The other connections (the one asking is not listed). */
  clients: ClientStatus[];
  tables: RouterTables;
  /** The HTTP front end; absent from a daemon embedded without one. */
  http?: HttpFrontStatus;
}

/**
 * Result of `mcpd/status` on a connection that is not a control connection: the daemon without paths,
 * every server with `lastError` and `lastStderr` null, and the asking connection alone as the clients.
 */
export interface RestrictedDaemonStatus {
  restricted: true;
  daemon: RestrictedDaemonInfo;
  servers: ServerStatus[];
  /** The asking connection only. */
  clients: ClientStatus[];
  tables: RouterTables;
}

/** Result of `mcpd/status`: full on a control connection, restricted on any other. */
export type StatusResult = DaemonStatus | RestrictedDaemonStatus;

// ---- listings ----

/** A tool with the server it belongs to. `name` is the server's own (unprefixed) name. */
export interface ToolInfo extends Tool {
  server: string;
  /** The aggregate view's name for it (`<server>__<name>`, sanitized); set by `mcpd/tools`. */
  exposedName?: string;
}

/** A prompt with the server it belongs to. `name` is the server's own (unprefixed) name. */
export interface PromptInfo extends Prompt {
  server: string;
  /** The aggregate view's name for it; set by `mcpd/prompts`. */
  exposedName?: string;
}

/** A resource with the server it belongs to. */
export interface ResourceInfo extends Resource {
  server: string;
}

/** A resource template with the server it belongs to. */
export interface ResourceTemplateInfo extends ResourceTemplate {
  server: string;
}

/** Result of `mcpd/tools`. */
export interface ToolsResult {
  tools: ToolInfo[];
}

/** Result of `mcpd/prompts`. */
export interface PromptsResult {
  prompts: PromptInfo[];
}

/** Result of `mcpd/resources`. */
export interface ResourcesResult {
  resources: ResourceInfo[];
  templates: ResourceTemplateInfo[];
}

// ---- operations ----

/** Result of `mcpd/restart`: the servers restarted (a disabled one is not). */
export interface RestartResult {
  restarted: string[];
}

/** Result of `mcpd/enable` and `mcpd/disable`: the server's state afterwards. */
export interface ServerStateResult {
  server: string;
  state: ServerState;
}

/** What a config reload did: server names per outcome. */
export interface ReloadDiff {
  added: string[];
  removed: string[];
  changed: string[];
  unchanged: string[];
}

/** Result of `mcpd/reload`: server names per outcome, and the new file's warnings. */
export interface ReloadResult extends ReloadDiff {
  warnings: string[];
}

/** Params of `mcpd/logs`. */
export interface LogsParams {
  /** A server's stderr; left out: the daemon's own log. */
  server?: string;
  /** How many of the most recent lines (default 100, at most 10000). */
  lines?: number;
}

/** Result of `mcpd/logs`. */
export interface LogsResult {
  /** The server asked about, when one was. */
  server?: string;
  lines: string[];
}

/** Result of `mcpd/shutdown`, sent before the graceful shutdown begins. */
export interface ShutdownResult {
  ok: true;
}

// ---- notifications ----

/** Params of `notifications/mcpd/serverState`, sent on connections that selected `events: true`. */
export interface ServerStateParams {
  server: string;
  state: ServerState;
  previous: ServerState;
  /** Why it changed (secrets masked). */
  reason: string;
}
