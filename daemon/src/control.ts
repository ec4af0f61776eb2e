import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { ForbiddenError, ProtocolError, WireCode, McpdError, type JsonObject } from "@mcpd/protocol";
import type { MCPManager, ReloadResult } from "./manager.js";
import { RUNTIME_DEFAULTS } from "./defaults.js";
import type { ServerHandle } from "./server-handle.js";
import type { Router } from "./router/router.js";
import type { Session } from "./router/session.js";
import { exposedName } from "./router/exposed-names.js";
import { disabledByCommand } from "./disable-reasons.js";

/** What the control methods need from the running daemon. */
export interface DaemonControl {
  manager: MCPManager;
  router: Router;
  info: () => JsonObject;
  reload: () => Promise<ReloadResult & { warnings: readonly string[] }>;
  shutdown: () => void;
  logTail: (lines: number) => string[];
}

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

/**
 * One server's entry in `mcpd/status`. `hint` is what the router suggests for the server (e.g. that a
 * server-to-client request could not be routed, and `sharing: "per-client"`); null when none.
 */
export function serverStatus(h: ServerHandle, sessions: number, hint?: string): JsonObject {
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
    startedAt: h.startedAt ? new Date(h.startedAt).toISOString() : null,
    uptimeMs: h.state === "ready" && h.startedAt ? Date.now() - h.startedAt : null,
    restarts: h.restarts,
    requests: h.stats.requests,
    errors: h.stats.errors,
    inFlight: h.stats.inFlight,
    latencyMs: h.stats.latency(),
    lastError: h.stats.lastError ?? h.lastExit ?? null,
    lastStderr: h.lastStderr ?? null,
    commandFound: command === undefined ? null : commandFound(command),
    tools: h.tools.length,
    sessions,
    hint: hint ?? null,
  };
}

function str(params: JsonObject | undefined, key: string, required: boolean): string | undefined {
  const v = params?.[key];
  if (v === undefined && !required) return undefined;
  if (typeof v !== "string") throw new ProtocolError(`"${key}" must be a string`, { data: { mcpdCode: "MCPD_PROTOCOL_VIOLATION" } });
  return v;
}

/**
 * Waits (bounded) for servers still coming up, so a listing right after `mcpd start` shows them: those
 * starting or restarting, except, for tools, those whose tools the cache already knows. For tools, a
 * lazy server never started whose tools are not cached is started, as an agent's `tools/list` does.
 */
async function settled(hs: ServerHandle[], toolsOnly: boolean): Promise<ServerHandle[]> {
  const unlisted = (h: ServerHandle): boolean => toolsOnly && !h.cachedTools && h.state === "stopped" && h.config.startup === "lazy";
  const waits = hs
    .filter((h) => ((h.state === "starting" || h.state === "restarting") && !(toolsOnly && h.cachedTools)) || unlisted(h))
    .map((h) => h.whenReady(Math.min(h.config.timeout, RUNTIME_DEFAULTS.aggregateSettleMs)).catch(() => undefined));
  if (waits.length > 0) await Promise.all(waits);
  return hs;
}

/**
 * Control methods only a control connection may call (see {@link Session.control}): they stop the daemon,
 * change what servers run, or read servers' stderr and the daemon's log. An agent's MCP session gets
 * MCPD_FORBIDDEN for them. `mcpd/status` is open to every connection but reduced for non-control ones
 * (see {@link agentStatus}); `mcpd/servers`, `mcpd/tools`, `mcpd/prompts`, `mcpd/resources` and
 * `mcpd/select` are open: they list what the connection's own MCP session can list anyway.
 */
export const PRIVILEGED_METHODS: ReadonlySet<string> = new Set([
  "mcpd/shutdown",
  "mcpd/disable",
  "mcpd/enable",
  "mcpd/restart",
  "mcpd/reload",
  "mcpd/logs",
]);

/** The refusal of a privileged method on a connection that is not a control connection. */
export function forbidden(method: string): ForbiddenError {
  return new ForbiddenError(
    method,
    `${method} is refused: only a control connection (the mcpd command, or @mcpd/client with control: true) may stop the daemon, ` +
      `enable, disable, restart or reload servers, or read logs. A connection becomes one by sending ` +
      `mcpd/select {"control": true} as its first message; an agent's MCP session never can.`,
  );
}

function clientStatus(s: Session): JsonObject {
  return {
    id: s.id,
    view: s.view.kind,
    server: s.view.kind === "server" ? s.view.server : null,
    clientInfo: s.clientInfo ?? null,
    inFlight: s.inFlightCount,
    connectedAt: new Date(s.connectedAt).toISOString(),
  };
}

/**
 * `mcpd/status` for a connection that is not a control connection: the servers' states (with the reason a
 * call would be refused, which such a call returns anyway) and this connection alone among the clients.
 * No other client's identity, no stderr or last error (they may quote a server's output), no paths.
 */
function agentStatus(d: DaemonControl, session: Session): JsonObject {
  const m = d.manager;
  const info = d.info();
  return {
    restricted: true,
    daemon: { pid: info.pid ?? null, version: info.version ?? null, startedAt: info.startedAt ?? null, uptimeMs: info.uptimeMs ?? null },
    servers: m.servers.map((h) => ({ ...serverStatus(h, m.privateSessions(h.name).length, d.router.hint(h)), lastError: null, lastStderr: null })),
    clients: [clientStatus(session)],
    tables: d.router.tables(),
  };
}

/** Answers the `mcpd/*` control methods of docs/protocol.md. */
export function createControl(d: DaemonControl) {
  return async (session: Session, method: string, params: JsonObject | undefined): Promise<JsonObject> => {
    const m = d.manager;
    const pick = (server?: string): ServerHandle[] => (server === undefined ? m.servers : [m.require(server)]);
    if (!session.control && PRIVILEGED_METHODS.has(method)) throw forbidden(method);
    switch (method) {
      case "mcpd/status": {
        const status: JsonObject = session.control
          ? {
              daemon: d.info(),
              servers: m.servers.map((h) => serverStatus(h, m.privateSessions(h.name).length, d.router.hint(h))),
              // The connection asking (`mcpd status` itself) is not one of the clients it wants to see.
              clients: [...d.router.sessions.values()].filter((s) => s !== session).map(clientStatus),
              tables: d.router.tables(),
            }
          : agentStatus(d, session);
        // A state reason or stderr line may quote a server's secret (a usage error naming its --api-key).
        // Unscrubbable means no JSON form, which the socket refuses to send anyway.
        return d.router.secrets.scrubValue(status) ?? status;
      }
      case "mcpd/servers":
        return {
          servers: m.servers.map((h) => ({
            name: h.name,
            state: h.state,
            enabled: h.config.enabled,
            transport: h.config.transport.type ?? "stdio",
            mode: h.client?.transport.info().mode ?? null,
            tools: h.tools.length,
          })),
        };
      case "mcpd/tools": {
        const server = str(params, "server", false);
        const hs = await settled(pick(server), true);
        if (server === undefined) {
          // Every server: exactly the aggregate view's list (failed and disabled servers left out), so the
          // CLI lists what agents see.
          d.router.catalog.invalidate();
          return { tools: d.router.catalog.tools().map((e) => ({ server: e.server, exposedName: e.exposed, ...e.item })) };
        }
        return { tools: hs.flatMap((h) => h.tools.map((t) => ({ server: h.name, exposedName: exposedName(h.name, t.name), ...t }))) };
      }
      case "mcpd/prompts": {
        const hs = await settled(pick(str(params, "server", false)), false);
        return { prompts: hs.flatMap((h) => (h.client?.prompts ?? []).map((p) => ({ server: h.name, exposedName: exposedName(h.name, p.name), ...p }))) };
      }
      case "mcpd/resources": {
        const hs = await settled(pick(str(params, "server", false)), false);
        return {
          resources: hs.flatMap((h) => (h.client?.resources ?? []).map((r) => ({ server: h.name, ...r }))),
          templates: hs.flatMap((h) => (h.client?.resourceTemplates ?? []).map((r) => ({ server: h.name, ...r }))),
        };
      }
      case "mcpd/restart": {
        const hs = pick(str(params, "server", false));
        await Promise.all(hs.map((h) => h.restart("restart requested")));
        return { restarted: hs.filter((h) => h.state !== "disabled").map((h) => h.name) };
      }
      case "mcpd/enable": {
        const h = m.require(str(params, "server", true) as string);
        await h.enable();
        return { server: h.name, state: h.state };
      }
      case "mcpd/disable": {
        const h = m.require(str(params, "server", true) as string);
        await h.disable(disabledByCommand(h.name));
        return { server: h.name, state: h.state };
      }
      case "mcpd/reload": {
        const r = await d.reload();
        return { ...r, warnings: [...r.warnings] };
      }
      case "mcpd/logs": {
        const lines = typeof params?.lines === "number" && params.lines > 0 ? Math.min(10_000, Math.floor(params.lines)) : 100;
        const server = str(params, "server", false);
        // The daemon's own lines were scrubbed as they were logged; a server's stderr is its own words.
        if (server === undefined) return { lines: d.logTail(lines) };
        // Kept across restarts, with a marker line where each run ended, so the reason it failed is there.
        const tail = m.require(server).stderrTail(lines);
        return { server, lines: tail.map((l) => d.router.secrets.scrub(l)) };
      }
      case "mcpd/shutdown":
        setImmediate(() => d.shutdown());
        return { ok: true };
      default:
        throw new McpdError("MCPD_METHOD_NOT_FOUND", `Method not found: ${method}`, { wireCode: WireCode.MethodNotFound });
    }
  };
}
