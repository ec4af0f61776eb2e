/**
 * The shapes of `mcpd/status` (docs/protocol.md): each server, each connection, and the daemon itself
 * (its log, socket watch, limits, routing tables and HTTP front), full on a control connection and
 * restricted on any other. Each object type has its {@link Fields} beside it.
 */
import type { Era } from "../mcp-methods.js";
import type { JsonObject } from "../types.js";
import { SERVER_SUMMARY_FIELDS, type ServerState, type ServerSummary } from "./control-types.js";
import type { Fields } from "./fields.js";
import type { HttpFrontStatus } from "./http-front-status.js";

/** Request latency percentiles over a bounded recent sample, in ms; null before the first request. */
export interface LatencyMs {
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

/**
 * A shared 2025-era server's UI session in `mcpd/status`: the second upstream session that serves the clients
 * that declared the MCP Apps UI extension (docs/protocol.md, *Capabilities upstream*).
 */
export interface UiSessionStatus {
  state: ServerState;
  /** Its process; null for a remote server or none. */
  pid: number | null;
  startedAt: string | null;
  /** Time since it became ready; null unless `ready`. */
  uptimeMs: number | null;
  requests: number;
  inFlight: number;
  tools: number;
}

export const UI_SESSION_STATUS_FIELDS: Fields<UiSessionStatus> = {
  state: "required",
  pid: "required",
  startedAt: "required",
  uptimeMs: "required",
  requests: "required",
  inFlight: "required",
  tools: "required",
};

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
  /**
   * The MCP era mcpd speaks to it: its session's, else the one its `protocolEra` forces or an earlier start
   * found; null while not known (`protocolEra: "auto"` before its first start).
   */
  era: Era | null;
  /**
   * Tools the server lists that mcpd leaves out, and why: a 2026 server's tools over HTTP whose
   * `x-mcp-header` annotations are invalid (the spec requires a client to reject them). Empty: none.
   */
  rejectedTools: { name: string; reason: string }[];
  /** Its UI session while it has one, else null; absent from a daemon that predates UI sessions in status. */
  uiSession?: UiSessionStatus | null;
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
  latencyMs: { presence: "required", fields: { p50: "required", p95: "required", p99: "required" } },
  lastError: "required",
  lastStderr: "required",
  commandFound: "required",
  sessions: "required",
  hint: "required",
  era: "required",
  rejectedTools: { presence: "required", fields: { name: "required", reason: "required" } },
  uiSession: { presence: "optional", fields: UI_SESSION_STATUS_FIELDS },
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
