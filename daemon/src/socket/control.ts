import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import {
  ForbiddenError,
  ProtocolError,
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
  type ClientStatus,
  type ControlHandlers,
  type DaemonInfo,
  type HttpFrontStatus,
  type DaemonStatus,
  type JsonObject,
  type LogsParams,
  type NoParams,
  type ReloadDiff,
  type RestrictedDaemonStatus,
  type ServerFilter,
  type ServerParams,
  type ServerStatus,
} from "@mcpd/protocol";
import type { MCPManager } from "../supervision/manager.js";
import type { ServerHandle } from "../supervision/server-handle.js";
import type { Router } from "../router/router.js";
import type { Session } from "../router/session.js";
import { visibleTools } from "../router/server-filters.js";
import { listPrompts, listResources, listTools, pick, toolsParams } from "./listings.js";
import { disabledByCommand } from "../supervision/disable-reasons.js";
import type { AuthFlows } from "../auth/auth-flows.js";
import { isoTime } from "../infra/iso-time.js";
import { HTTP_TOKEN_HANDLERS, type HttpTokenAdmin } from "./http-token-control.js";

/** What the control methods need from the running daemon. */
export interface DaemonControl {
  manager: MCPManager;
  router: Router;
  info: () => DaemonInfo;
  /** The HTTP front end's state, when the daemon has one. */
  http?: () => HttpFrontStatus;
  /** The HTTP front end's scoped tokens, when the daemon has one. */
  httpTokens?: HttpTokenAdmin;
  reload: () => Promise<ReloadDiff & { warnings: readonly string[] }>;
  shutdown: () => void;
  logTail: (lines: number) => string[];
  /** The `mcpd auth` flows (and the servers' OAuth providers). */
  auth: AuthFlows;
}

/** What each control handler is given besides its params: the daemon, and the session asking. */
export interface ControlContext {
  d: DaemonControl;
  session: Session;
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
export function serverStatus(h: ServerHandle, sessions: number, hint?: string): ServerStatus {
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
  };
}

function str(params: JsonObject | undefined, key: string, required: boolean): string | undefined {
  const v = params?.[key];
  if (v === undefined && !required) return undefined;
  if (typeof v !== "string") throw new ProtocolError(`"${key}" must be a string`, { data: { mcpdCode: "MCPD_PROTOCOL_VIOLATION" } });
  return v;
}

/** Params of a method that takes none: whatever was sent is ignored. */
const noParams = (): NoParams => ({});

/** `{ server? }`. @throws ProtocolError when `server` is there but not a string. */
function serverFilter(params: JsonObject | undefined): ServerFilter {
  const server = str(params, "server", false);
  return server === undefined ? {} : { server };
}

/** `{ server }`. @throws ProtocolError when `server` is missing or not a string. */
function serverParams(params: JsonObject | undefined): ServerParams {
  return { server: str(params, "server", true) as string };
}

/** `{ server?, lines? }`: `lines` not a positive number means the default (100), more than 10000 means 10000. */
function logsParams(params: JsonObject | undefined): LogsParams {
  const lines = typeof params?.lines === "number" && params.lines > 0 ? Math.min(10_000, Math.floor(params.lines)) : 100;
  const server = str(params, "server", false);
  return server === undefined ? { lines } : { server, lines };
}

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
 * Whether `session` is shown server `name` in `mcpd/status` and `mcpd/servers`: a confined one (an HTTP
 * session opened with a scoped token) only the servers its view shows; any other, every server.
 */
function shows(session: Session, name: string): boolean {
  const f = session.filter;
  return f?.confinement === undefined || f.viewsServer(name);
}

function clientStatus(s: Session, router: Router): ClientStatus {
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
function agentStatus(d: DaemonControl, session: Session): RestrictedDaemonStatus {
  const m = d.manager;
  const info = d.info();
  return {
    restricted: true,
    daemon: { pid: info.pid, version: info.version, startedAt: info.startedAt, uptimeMs: info.uptimeMs },
    servers: m.servers
      .filter((h) => shows(session, h.name))
      .map((h) => ({
        ...serverStatus(h, m.privateSessions(h.name).length, d.router.hint(h)),
        lastError: null,
        lastStderr: null,
      })),
    clients: [clientStatus(session, d.router)],
    tables: d.router.tables(),
  };
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
            servers: m.servers.map((h) => serverStatus(h, m.privateSessions(h.name).length, d.router.hint(h))),
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
      await Promise.all(hs.map((h) => h.restart("restart requested")));
      return { restarted: hs.filter((h) => h.state !== "disabled").map((h) => h.name) };
    },
  },
  [McpdEnable.method]: {
    params: serverParams,
    async handle({ server }, { d }) {
      const h = d.manager.require(server);
      await h.enable();
      return { server: h.name, state: h.state };
    },
  },
  [McpdDisable.method]: {
    params: serverParams,
    async handle({ server }, { d }) {
      const h = d.manager.require(server);
      await h.disable(disabledByCommand(h.name));
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
