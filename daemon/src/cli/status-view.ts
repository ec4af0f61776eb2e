import type { ClientStatus, DaemonInfo, DaemonStatus, HttpFrontStatus, ServerStatus } from "@mcpd/client";
import { formatDuration, formatLatency, table, truncate, type Palette } from "./format.js";
import { redactUrlCredentials } from "../secrets/redact-url.js";
import { terminalSafe } from "./terminal-text.js";

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
  > {
  stateReason: string | null;
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

/** A client's selection in the table: its profile, its tool globs (`tools a*,b*`), both, or `-`. */
function selectionText(cl: StatusJsonClient): string {
  const parts: string[] = [];
  if (cl.profile) parts.push(cl.profile);
  if (cl.tools) parts.push(`tools ${truncate(cl.tools.join(","), 40)}`);
  return parts.length > 0 ? parts.join(" + ") : "-";
}

function stateColour(state: string, c: Palette): string {
  if (state === "ready") return c.green(state);
  if (state === "failed" || state === "needs-auth") return c.red(state);
  if (state === "disabled" || state === "stopped") return c.dim(state);
  return c.yellow(state);
}

/** States that are a problem: the server is down and mcpd is retrying, has given up, or waits for `mcpd auth`. */
const PROBLEM_STATES: ReadonlySet<string> = new Set(["failed", "restarting", "needs-auth"]);

/**
 * The note line about a server's state, without its name; `undefined` when there is nothing to say. A
 * problem state gets its reason; a disabled server gets its reason once when that says more than
 * "disabled" (who disabled it, how to enable it); starting, ready and stopped are not problems, and the
 * table already shows them.
 */
export function stateNote(v: Pick<StatusJson["servers"][number], "state" | "stateReason">): string | undefined {
  const reason = v.stateReason?.trim() ?? "";
  // A reason that begins with the state's own word ("disabled by ...") is not prefixed with it again.
  const saysState = new RegExp(`^${v.state.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`, "i").test(reason);
  if (PROBLEM_STATES.has(v.state)) return reason === "" ? v.state : saysState ? reason : `${v.state}: ${reason}`;
  if (v.state !== "disabled" || reason === "" || reason.toLowerCase() === "disabled") return undefined;
  return saysState ? reason : `disabled (${reason})`;
}

/** The servers' table of {@link renderStatus}: one row each. */
function serverTable(servers: StatusJsonServer[], c: Palette): string {
  const rows = servers.map((v) => [
    v.name,
    stateColour(v.state, c),
    v.mode && v.mode !== v.transport && v.mode !== "stdio" ? `${v.transport} (${v.mode})` : v.transport,
    v.pid === null ? "-" : String(v.pid),
    formatDuration(v.uptimeMs),
    String(v.restarts),
    String(v.requests),
    v.errors > 0 ? c.red(String(v.errors)) : "0",
    String(v.inFlight),
    formatLatency(v.latencyMs.p50),
    formatLatency(v.latencyMs.p95),
    formatLatency(v.latencyMs.p99),
    String(v.tools),
    v.era ?? "-",
  ]);
  const heads = ["SERVER", "STATE", "TRANSPORT", "PID", "UPTIME", "RESTARTS", "REQS", "ERRS", "INFL", "P50", "P95", "P99", "TOOLS", "ERA"];
  return table(heads, rows, c);
}

/**
 * The human rendering of `mcpd status`: daemon facts, a server table, one line per problem (a command
 * not found, a down server's state reason and last stderr line, any server's last error, a disabled
 * server's reason), clients. Every text in it (a server's stderr line and state reason, a client's name)
 * is shown with its control characters escaped.
 */
export function renderStatus(status: StatusJson, c: Palette, width = 100): string {
  const st = terminalSafe(status);
  const d = st.daemon;
  const out: string[] = [];
  out.push(`${c.bold("mcpd")} ${d.version}  pid ${d.pid}  up ${formatDuration(d.uptimeMs)}`);
  out.push(`socket  ${d.socketPath}`);
  out.push(`config  ${d.configFile ?? "-"}`);
  out.push(`log     ${d.logFile ?? "(stderr: running in the foreground)"}`);
  if (d.logDroppedLines > 0) {
    const why = d.logWriteError ? ` (${d.logWriteError.ongoing ? "still failing" : "last error"}: ${d.logWriteError.message})` : "";
    out.push(c.yellow(`log: ${d.logDroppedLines} line${d.logDroppedLines === 1 ? "" : "s"} dropped${why}`));
  }
  const h = st.http;
  if (h?.enabled) {
    const n = h.sessions + h.legacySessions;
    if (h.url) out.push(`http    ${h.url}  (token in ${h.tokenFile}; ${n} session${n === 1 ? "" : "s"})`);
    else out.push(c.yellow(`http    not serving: ${h.error ?? "not listening"}`));
  }
  if (d.socketProblem)
    out.push(
      c.yellow(`socket problem at ${d.socketProblem.at ?? "?"}: ${d.socketProblem.problem} (re-created ${d.socketProblem.recreated}x)`),
    );
  out.push("");
  if (st.servers.length === 0) {
    out.push("No servers configured. Add some to the config file, or run 'mcpd config import --from claude-desktop'.");
  } else {
    out.push(serverTable(st.servers, c));
    const notes: string[] = [];
    for (const v of st.servers) {
      const room = Math.max(20, width - v.name.length - 16);
      if (v.commandFound === false) notes.push(`${c.red("!")} ${v.name}: command not found on the daemon's PATH`);
      const note = stateNote(v);
      // A disabled server's note is advice (who disabled it, how to enable it), a needs-auth one ends with
      // the command to run: never cut off their end.
      if (note) notes.push(`  ${v.name}: ${v.state === "disabled" || v.state === "needs-auth" ? note : truncate(note, room)}`);
      if (v.lastError) notes.push(`  ${v.name}: last error: ${truncate(v.lastError, room)}`);
      // A healthy server's stderr is chatter ("listening on stdio"); a down server's says why.
      if (v.lastStderr && PROBLEM_STATES.has(v.state)) notes.push(`  ${v.name}: stderr: ${truncate(v.lastStderr, room)}`);
      // Not truncated: the hint is the advice itself, and its end names the setting to use.
      if (v.hint) notes.push(`  ${v.name}: hint: ${v.hint}`);
    }
    if (notes.length > 0) out.push("", ...notes);
  }
  out.push("");
  if (st.clients.length === 0) {
    out.push("Clients: none connected");
  } else {
    out.push(`Clients (${st.clients.length}):`);
    out.push(
      table(
        ["ID", "VIA", "CLIENT", "VIEW", "PROFILE", "INFL", "CONNECTED"],
        st.clients.map((cl) => [
          String(cl.id),
          cl.face,
          cl.name ? `${cl.name}${cl.version ? ` ${cl.version}` : ""}` : "-",
          cl.server ? `server ${cl.server}` : cl.view,
          selectionText(cl),
          String(cl.inFlight),
          cl.connectedAt ?? "-",
        ]),
        c,
      ),
    );
  }
  return out.join("\n");
}
