/**
 * `mcpd status --json`: the stable shape ({@link StatusJson}) built from the daemon's `mcpd/status` answer,
 * each value checked (the daemon may be another version). The human rendering is status-view.ts.
 */
import type { ClientStatus, DaemonInfo, DaemonStatus, HttpFrontStatus, ServerStatus, UiSessionStatus } from "@mcpd/client";
import { redactUrlCredentials } from "../secrets/redact-url.js";

/** The daemon in {@link StatusJson}. */
export interface StatusJsonDaemon extends Pick<DaemonInfo, "pid" | "version" | "socketPath" | "logFile"> {
  startedAt: string | null;
  uptimeMs: number | null;
  configFile: string | null;
  /** The socket watch: a removed socket file is re-created; the last problem seen, if any. */
  socketProblem: { problem: string; at: string | null; recreated: number } | null;
  /** Log lines that could not be written (a full disk, a closed stderr) since the daemon started. */
  logDroppedLines: number;
  /** The last log write error; `ongoing` while lines are still being dropped. */
  logWriteError: { message: string; at: string | null; ongoing: boolean } | null;
}

/** One server in {@link StatusJson}: the daemon's {@link ServerStatus} fields it picks, typed as there. */
export interface StatusJsonServer
  extends Pick<
    ServerStatus,
    | "name"
    | "state"
    | "enabled"
    | "transport"
    | "mode"
    | "pid"
    | "startedAt"
    | "uptimeMs"
    | "restarts"
    | "requests"
    | "errors"
    | "inFlight"
    | "latencyMs"
    | "tools"
    | "lastError"
    | "lastStderr"
    | "commandFound"
    | "hint"
    | "era"
    | "rejectedTools"
  > {
  stateReason: string | null;
  /** Its UI session (a shared 2025-era server's session for clients that declared the MCP Apps UI extension), or null. */
  uiSession: Pick<UiSessionStatus, "state" | "pid" | "uptimeMs" | "requests" | "inFlight" | "tools"> | null;
}

/** One client in {@link StatusJson}: its `clientInfo` name and version lifted out. */
export interface StatusJsonClient extends Pick<ClientStatus, "id" | "view" | "server" | "profile" | "tools" | "inFlight"> {
  /** How it connected: `socket`, `http` (Streamable HTTP) or `sse` (legacy HTTP+SSE). */
  face: string;
  name: string | null;
  version: string | null;
  connectedAt: string | null;
}

/**
 * The stable shape of `mcpd status --json` (docs/operations.md documents it). Fields are picked one by
 * one from the daemon's `mcpd/status` ({@link DaemonStatus}, declared in @mcpd/protocol), so a field the
 * daemon adds later never changes this output unannounced. Durations in ms; times ISO 8601; unknown
 * values `null`.
 */
export interface StatusJson {
  daemon: StatusJsonDaemon;
  servers: StatusJsonServer[];
  clients: StatusJsonClient[];
  /** The HTTP front end: the aggregate endpoint's URL, the token file, and its sessions; null from a daemon without one. */
  http: StatusJsonHttp | null;
}

/** The HTTP front end in {@link StatusJson}. */
export interface StatusJsonHttp extends Pick<HttpFrontStatus, "url" | "tokenFile" | "listening" | "error" | "sessions" | "legacySessions"> {
  enabled: boolean;
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const text = (v: unknown): string | null => (typeof v === "string" ? redactUrlCredentials(v) : null);

function socketProblem(w: DaemonInfo["socket"] | undefined): StatusJsonDaemon["socketProblem"] {
  if (typeof w !== "object" || w === null) return null;
  const problem = text(w.lastProblem);
  return problem === null ? null : { problem, at: text(w.lastProblemAt), recreated: num(w.recreated) ?? 0 };
}

function logWriteError(l: DaemonInfo["log"] | undefined): StatusJsonDaemon["logWriteError"] {
  if (typeof l !== "object" || l === null) return null;
  const message = text(l.lastError);
  return message === null ? null : { message, at: text(l.lastErrorAt), ongoing: l.failing === true };
}

function uiSessionJson(u: ServerStatus["uiSession"]): StatusJsonServer["uiSession"] {
  if (typeof u !== "object" || u === null) return null;
  const { state, pid, uptimeMs, requests, inFlight, tools } = u;
  return {
    state,
    pid: num(pid),
    uptimeMs: num(uptimeMs),
    requests: num(requests) ?? 0,
    inFlight: num(inFlight) ?? 0,
    tools: num(tools) ?? 0,
  };
}

/** Builds {@link StatusJson} from the daemon's answer (checking each value: the daemon may be another version). */
export function statusJson(s: DaemonStatus): StatusJson {
  const d = s.daemon ?? ({} as DaemonStatus["daemon"]);
  return {
    daemon: {
      pid: d.pid,
      version: d.version,
      startedAt: text(d.startedAt),
      uptimeMs: num(d.uptimeMs),
      socketPath: d.socketPath,
      configFile: text(d.configFile),
      logFile: text(d.logFile),
      socketProblem: socketProblem(d.socket),
      logDroppedLines: num(d.log?.droppedLines) ?? 0,
      logWriteError: logWriteError(d.log),
    },
    servers: (s.servers ?? []).map((v) => ({
      name: v.name,
      state: v.state,
      enabled: v.enabled !== false,
      transport: v.transport ?? "stdio",
      mode: v.mode ?? null,
      pid: num(v.pid),
      startedAt: text(v.startedAt),
      uptimeMs: num(v.uptimeMs),
      restarts: num(v.restarts) ?? 0,
      requests: num(v.requests) ?? 0,
      errors: num(v.errors) ?? 0,
      inFlight: num(v.inFlight) ?? 0,
      latencyMs: { p50: num(v.latencyMs?.p50), p95: num(v.latencyMs?.p95), p99: num(v.latencyMs?.p99) },
      tools: num(v.tools) ?? 0,
      stateReason: text(v.stateReason),
      lastError: text(v.lastError),
      lastStderr: text(v.lastStderr),
      commandFound: typeof v.commandFound === "boolean" ? v.commandFound : null,
      hint: text(v.hint),
      era: v.era === "2025" || v.era === "2026" ? v.era : null,
      rejectedTools: Array.isArray(v.rejectedTools)
        ? v.rejectedTools.filter((r) => typeof r?.name === "string").map((r) => ({ name: r.name, reason: text(r.reason) ?? "" }))
        : [],
      uiSession: uiSessionJson(v.uiSession),
    })),
    clients: (s.clients ?? []).map((c) => ({
      id: c.id,
      name: typeof c.clientInfo?.name === "string" ? c.clientInfo.name : null,
      version: typeof c.clientInfo?.version === "string" ? c.clientInfo.version : null,
      view: c.view,
      server: typeof c.server === "string" ? c.server : null,
      profile: typeof c.profile === "string" ? c.profile : null,
      tools: Array.isArray(c.tools) ? c.tools.filter((g): g is string => typeof g === "string") : null,
      inFlight: num(c.inFlight) ?? 0,
      connectedAt: text(c.connectedAt),
      face: typeof c.face === "string" ? c.face : "socket",
    })),
    http: s.http
      ? {
          enabled: s.http.enabled === true,
          url: text(s.http.url),
          tokenFile: text(s.http.tokenFile) ?? "",
          listening: s.http.listening === true,
          error: text(s.http.error),
          sessions: num(s.http.sessions) ?? 0,
          legacySessions: num(s.http.legacySessions) ?? 0,
        }
      : null,
  };
}
