import { formatDuration, formatLatency, table, truncate, type Palette } from "./format.js";
import type { StatusJson, StatusJsonClient, StatusJsonServer } from "./status-json.js";
import { terminalSafe } from "./terminal-text.js";

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

/** A server's UI session as a row of the servers' table, under its server's: `<server> (UI)`. */
function uiSessionRow(v: StatusJsonServer, c: Palette): string[] {
  const u = v.uiSession as NonNullable<StatusJsonServer["uiSession"]>;
  const pid = u.pid === null ? "-" : String(u.pid);
  const row = [`${v.name} (UI)`, stateColour(u.state, c), v.transport, pid, formatDuration(u.uptimeMs), "-", String(u.requests)];
  return [...row, "-", String(u.inFlight), "-", "-", "-", String(u.tools), v.era ?? "-"];
}

/** The servers' table of {@link renderStatus}: one row each, and one more for a server's UI session. */
function serverTable(servers: StatusJsonServer[], c: Palette): string {
  const rows = servers.flatMap((v) => [
    [
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
    ],
    ...(v.uiSession ? [uiSessionRow(v, c)] : []),
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
      for (const r of v.rejectedTools) notes.push(`  ${v.name}: tool "${r.name}" left out: ${truncate(r.reason, room)}`);
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
