import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import type { ClientStatus, RestrictedDaemonStatus, ServerStatus, UiSessionStatus } from "@mcpd/protocol";
import { isoTime } from "../infra/iso-time.js";
import type { Router } from "../router/router.js";
import { visibleTools } from "../router/server-filters.js";
import type { Session } from "../router/session.js";
import type { ServerHandle } from "../supervision/server-handle.js";
import type { DaemonControl } from "./daemon-control.js";

/** Whether a stdio command resolves on the daemon's PATH (absolute or relative paths are checked as is). */
export function commandFound(command: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const can = (p: string): boolean => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (isAbsolute(command) || command.includes("/")) return can(command);
  return (env.PATH ?? "").split(delimiter).some((dir) => dir && can(join(dir, command)));
}

/** A shared server's UI session in `mcpd/status`, or null when it has none. */
function uiSessionStatus(u: ServerHandle | undefined): UiSessionStatus | null {
  if (u === undefined) return null;
  return {
    state: u.state,
    pid: u.pid ?? u.client?.transport.info()?.pid ?? null,
    startedAt: u.startedAt ? isoTime(u.startedAt) : null,
    uptimeMs: u.state === "ready" && u.startedAt ? Date.now() - u.startedAt : null,
    requests: u.stats.requests,
    inFlight: u.stats.inFlight,
    tools: visibleTools(u.config, u.tools).length,
  };
}

/**
 * One server's entry in `mcpd/status`. `hint` is what the router suggests for the server (e.g. that a
 * server-to-client request could not be routed, and `sharing: "per-client"`); null when none. `ui`: its UI
 * session, if it has one.
 */
export function serverStatus(h: ServerHandle, sessions: number, hint?: string, ui?: ServerHandle): ServerStatus {
  const t = h.config.transport;
  const info = h.client?.transport.info();
  const command = "command" in t ? t.command : undefined;
  return {
    name: h.name,
    state: h.state,
    stateReason: h.stateReason,
    enabled: h.config.enabled,
    transport: t.type ?? "stdio",
    mode: info?.mode ?? null,
    // While starting, the process exists before the handshake ends: show it (a stuck start is found by it).
    pid: h.pid ?? info?.pid ?? null,
    startedAt: h.startedAt ? isoTime(h.startedAt) : null,
    uptimeMs: h.state === "ready" && h.startedAt ? Date.now() - h.startedAt : null,
    restarts: h.restarts,
    requests: h.stats.requests,
    errors: h.stats.errors,
    inFlight: h.stats.inFlight,
    latencyMs: h.stats.latency(),
    lastError: h.stats.lastError ?? h.lastExit ?? null,
    lastStderr: h.lastStderr ?? null,
    commandFound: command === undefined ? null : commandFound(command),
    tools: visibleTools(h.config, h.tools).length,
    sessions,
    hint: hint ?? null,
    era: h.client?.era ?? (h.config.protocolEra === "auto" ? h.eras.known : h.config.protocolEra) ?? null,
    rejectedTools: (h.client?.rejectedTools ?? []).map((r) => ({ name: r.name, reason: r.reason })),
    uiSession: uiSessionStatus(ui),
  };
}

/**
 * Whether `session` is shown server `name` in `mcpd/status` and `mcpd/servers`: a confined one (an HTTP
 * session opened with a scoped token) only the servers its view shows; any other, every server.
 */
export function shows(session: Session, name: string): boolean {
  const f = session.filter;
  return f?.confinement === undefined || f.viewsServer(name);
}

export function clientStatus(s: Session, router: Router): ClientStatus {
  return {
    id: s.id,
    view: s.view.kind,
    server: s.view.kind === "server" ? s.view.server : null,
    profile: s.filter?.profileName ?? null,
    tools: s.filter?.toolGlobs ? [...s.filter.toolGlobs] : null,
    clientInfo: s.clientInfo ?? null,
    inFlight: s.inFlight.size,
    connectedAt: isoTime(s.connectedAt),
    face: router.faceOf(s),
  };
}

/**
 * `mcpd/status` for a connection that is not a control connection: the servers' states (with the reason a
 * call would be refused, which such a call returns anyway) and this connection alone among the clients.
 * No other client's identity, no stderr or last error (they may quote a server's output), no paths.
 */
export function agentStatus(d: DaemonControl, session: Session): RestrictedDaemonStatus {
  const m = d.manager;
  const info = d.info();
  return {
    restricted: true,
    daemon: { pid: info.pid, version: info.version, startedAt: info.startedAt, uptimeMs: info.uptimeMs },
    servers: m.servers
      .filter((h) => shows(session, h.name))
      .map((h) => ({
        ...serverStatus(h, m.privateSessions(h.name).length, d.router.hint(h), m.ui.get(h.name)),
        lastError: null,
        lastStderr: null,
      })),
    clients: [clientStatus(session, d.router)],
    tables: d.router.tables(),
  };
}
