import {
  ForbiddenError,
  WireCode,
  McpdError,
  McpdAuthLogout,
  McpdAuthStart,
  McpdAuthWait,
  McpdDisable,
  McpdEnable,
  McpdLogs,
  McpdPrompts,
  McpdReload,
  McpdResources,
  McpdRestart,
  McpdSelect,
  McpdServers,
  McpdShutdown,
  McpdStatus,
  McpdTools,
  controlMethodNamed,
  type ControlHandlers,
  type DaemonStatus,
  type JsonObject,
  type RestrictedDaemonStatus,
} from "@mcpd/protocol";
import type { Session } from "../router/session.js";
import { visibleTools } from "../router/server-filters.js";
import { listPrompts, listResources, listTools, pick, toolsParams } from "./listings.js";
import { disabledByCommand } from "../supervision/disable-reasons.js";
import { HTTP_TOKEN_HANDLERS } from "./http-token-control.js";
import { DASHBOARD_HANDLERS } from "./dashboard-control.js";
import { logsParams, noParams, serverFilter, serverParams } from "./control-params.js";
import type { ControlContext, DaemonControl } from "./daemon-control.js";
import { agentStatus, clientStatus, serverStatus, shows } from "./status-report.js";

export type { ControlContext, DaemonControl } from "./daemon-control.js";
export { commandFound, serverStatus } from "./status-report.js";

/**
 * The refusal of a privileged method (its declaration says `privileged: true`: it stops the daemon, changes
 * what servers run, or reads servers' stderr and the daemon's log) on a connection that is not a control
 * connection (see {@link Session.control}). `mcpd/status` is open to every connection but reduced for
 * non-control ones (see {@link agentStatus}); the listings are open: they list what the connection's own
 * MCP session can list anyway.
 */
export function forbidden(method: string): ForbiddenError {
  return new ForbiddenError(
    method,
    `${method} is refused: only a control connection (the mcpd command, or @mcpd/client with control: true) may stop the daemon, ` +
      `enable, disable, restart or reload servers, or read logs. A connection becomes one by sending ` +
      `${McpdSelect.method} {"control": true} as its first message; an agent's MCP session never can.`,
  );
}

/**
 * The `mcpd/*` methods the dispatcher answers, one handler per declaration in @mcpd/protocol (the compiler
 * holds the table to them: a missing or extra method, or a result of the wrong shape, does not build).
 */
export const CONTROL_HANDLERS: ControlHandlers<ControlContext> = {
  [McpdStatus.method]: {
    params: noParams,
    async handle(_params, { d, session }) {
      const m = d.manager;
      const status: DaemonStatus | RestrictedDaemonStatus = session.control
        ? {
            daemon: d.info(),
            servers: m.servers.map((h) => serverStatus(h, m.privateSessions(h.name).length, d.router.hint(h), m.ui.get(h.name))),
            // The connection asking (`mcpd status` itself) is not one of the clients it wants to see.
            clients: [...d.router.sessions.values()].filter((s) => s !== session).map((s) => clientStatus(s, d.router)),
            tables: d.router.tables(),
            ...(d.http ? { http: d.http() } : {}),
          }
        : agentStatus(d, session);
      // A state reason or stderr line may quote a server's secret (a usage error naming its --api-key).
      // Unscrubbable means no JSON form, which the socket refuses to send anyway.
      return d.router.secrets.scrubValue(status) ?? status;
    },
  },
  [McpdServers.method]: {
    params: noParams,
    async handle(_params, { d, session }) {
      return {
        servers: d.manager.servers
          .filter((h) => shows(session, h.name))
          .map((h) => ({
            name: h.name,
            state: h.state,
            enabled: h.config.enabled,
            transport: h.config.transport.type ?? "stdio",
            mode: h.client?.transport.info().mode ?? null,
            tools: visibleTools(h.config, h.tools).length,
          })),
      };
    },
  },
  [McpdTools.method]: {
    params: toolsParams,
    handle: (params, { d, session }) => listTools(params, { manager: d.manager, router: d.router, session }),
  },
  [McpdPrompts.method]: {
    params: serverFilter,
    handle: (params, { d, session }) => listPrompts(params, { manager: d.manager, router: d.router, session }),
  },
  [McpdResources.method]: {
    params: serverFilter,
    handle: (params, { d, session }) => listResources(params, { manager: d.manager, router: d.router, session }),
  },
  [McpdRestart.method]: {
    params: serverFilter,
    async handle({ server }, { d }) {
      const hs = pick(d.manager, server);
      await Promise.all(hs.map((h) => d.manager.restartServer(h.name, "restart requested")));
      return { restarted: hs.filter((h) => h.state !== "disabled").map((h) => h.name) };
    },
  },
  [McpdEnable.method]: {
    params: serverParams,
    async handle({ server }, { d }) {
      const h = d.manager.require(server);
      await d.manager.enableServer(h.name);
      return { server: h.name, state: h.state };
    },
  },
  [McpdDisable.method]: {
    params: serverParams,
    async handle({ server }, { d }) {
      const h = d.manager.require(server);
      await d.manager.disableServer(h.name, disabledByCommand(h.name));
      return { server: h.name, state: h.state };
    },
  },
  [McpdReload.method]: {
    params: noParams,
    async handle(_params, { d }) {
      const r = await d.reload();
      return { ...r, warnings: [...r.warnings] };
    },
  },
  [McpdLogs.method]: {
    params: logsParams,
    async handle({ server, lines = 100 }, { d }) {
      // The daemon's own lines were scrubbed as they were logged; a server's stderr is its own words.
      if (server === undefined) return { lines: d.logTail(lines) };
      // Kept across restarts, with a marker line where each run ended, so the reason it failed is there.
      const tail = d.manager.require(server).stderrTail(lines);
      return { server, lines: tail.map((l) => d.router.secrets.scrub(l)) };
    },
  },
  [McpdAuthStart.method]: {
    params: serverParams,
    async handle({ server }, { d }) {
      return d.auth.start(server);
    },
  },
  [McpdAuthWait.method]: {
    params: serverParams,
    async handle({ server }, { d }) {
      const r = await d.auth.wait(server);
      // The state reason may quote what a server said.
      return { ...r, stateReason: d.router.secrets.scrub(r.stateReason) };
    },
  },
  [McpdAuthLogout.method]: {
    params: serverParams,
    async handle({ server }, { d }) {
      return d.auth.logout(server);
    },
  },
  [McpdShutdown.method]: {
    params: noParams,
    async handle(_params, { d }) {
      setImmediate(() => d.shutdown());
      return { ok: true };
    },
  },
  ...HTTP_TOKEN_HANDLERS,
  ...DASHBOARD_HANDLERS,
};

/** A handler as the dispatcher calls it: the table above is checked per method, the call site cannot be. */
interface WireHandler {
  params(raw: JsonObject | undefined): unknown;
  handle(params: unknown, context: ControlContext): Promise<unknown>;
}

/**
 * Answers the `mcpd/*` control methods of docs/protocol.md (all but `mcpd/select`, which the session
 * answers). @throws ForbiddenError (-32071) for a privileged method on a connection that is not a control
 * connection; MCPD_METHOD_NOT_FOUND (-32601) for an undeclared method; the handler's errors.
 */
export function createControl(d: DaemonControl) {
  return async (session: Session, method: string, params: JsonObject | undefined): Promise<JsonObject> => {
    const declared = controlMethodNamed(method);
    if (declared?.privileged && !session.control) throw forbidden(method);
    if (declared === undefined || !Object.hasOwn(CONTROL_HANDLERS, declared.method)) {
      throw new McpdError("MCPD_METHOD_NOT_FOUND", `Method not found: ${method}`, { wireCode: WireCode.MethodNotFound });
    }
    const handler = CONTROL_HANDLERS[declared.method as keyof typeof CONTROL_HANDLERS] as unknown as WireHandler;
    return (await handler.handle(handler.params(params), { d, session })) as JsonObject;
  };
}
