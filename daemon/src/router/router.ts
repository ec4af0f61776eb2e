import { silentLogger, type ClientFace, type Logger } from "@mcpd/protocol";
import type { DaemonSettings } from "../config/config-schema.js";
import { CONFIG_DEFAULTS } from "../defaults.js";
import { SecretScrubber } from "../secrets/index.js";
import { Catalog } from "./catalog.js";
import { filterWarnings } from "./filter-warnings.js";
import { HeldCalls } from "./held-calls.js";
import { InFlightDrain } from "./in-flight-drain.js";
import { LogLevels } from "./log-levels.js";
import type { CallSpans, InputLimits, Outbound, Scrubber, SessionContext } from "./ports.js";
import { Profiles } from "./profiles.js";
import { ProgressRoutes } from "./progress-routes.js";
import { ServerRequests } from "./server-requests.js";
import { Session, type DownstreamSessionOptions } from "./session.js";
import { Subscriptions } from "./subscriptions.js";
import { usedByUiClient, usedWithoutUi } from "./app-access.js";
import { UpstreamDelivery } from "./upstream-delivery.js";
import type { ServerDirectory, Upstream } from "./upstream-port.js";
import { applyViewChanges, filtersSnapshot, type FiltersSnapshot } from "./view-changes.js";

export interface RouterOptions extends DownstreamSessionOptions {
  logger?: Logger;
  /** The daemon's secret scrubber (also the root logger's); default: one over the servers' configs alone. */
  secrets?: Scrubber;
}

/**
 * The router: every downstream connection's {@link Session}, and the state they share. It builds the
 * shared parts (progress routes, subscriptions, logging levels, the aggregate catalog, server-to-client
 * request routing), hands each session the narrow {@link SessionContext} it uses, and feeds what the
 * servers say (its {@link ServerDirectory}'s typed callbacks) to {@link UpstreamDelivery}, which brings it to
 * the right connections. It knows the servers only through its ports (upstream-port.ts).
 */
export class Router {
  /** The servers: the daemon's manager behind its adapter, or fake upstreams in a test. */
  readonly manager: ServerDirectory;
  readonly catalog: Catalog;
  /** The config's profiles (`mcpd.profiles`), which connections select; set by {@link applyFilters}. */
  readonly profiles = new Profiles();
  readonly sessions = new Map<string, Session>();
  readonly log: Logger;
  /** Masks the configured servers' secret values in what the daemon says about them (logs, errors, status). */
  readonly secrets: Scrubber;
  private readonly sessionOptions: DownstreamSessionOptions;
  private readonly progress: ProgressRoutes;
  private readonly subscriptions: Subscriptions;
  private readonly levels: LogLevels;
  private readonly requests: ServerRequests;
  /** 2025 servers' requests held for 2026-era clients' retries; the HTTP front binds its requests' states to their token. */
  readonly held: HeldCalls;
  private readonly context: SessionContext;
  private sessionCounter = 0;
  /** The `input_required` limits every session reads; {@link applyFilters} sets them from the config. */
  private readonly input: InputLimits = { maxRounds: CONFIG_DEFAULTS.maxInputRounds, stateTtlMs: CONFIG_DEFAULTS.requestStateTtlMs };
  /** How each session's client reached the daemon, when not by the socket. */
  private readonly faces = new Map<string, ClientFace>();
  private readonly drain = new InFlightDrain(() => this.inFlightTotal());
  /** The spans of relayed requests: the daemon's telemetry sets the tracer while `mcpd.telemetry.otlp` is on. */
  readonly spans: CallSpans = { tracer: undefined };

  constructor(manager: ServerDirectory, options: RouterOptions) {
    this.manager = manager;
    this.log = options.logger ?? silentLogger;
    this.secrets = options.secrets ?? new SecretScrubber(() => manager.servers.map((h) => h.config));
    this.sessionOptions = options;
    this.catalog = new Catalog(
      () => manager.servers,
      (name) => manager.standIn?.(name),
    );
    const sessions = (): Iterable<Session> => this.sessions.values();
    this.progress = new ProgressRoutes(this.log);
    this.subscriptions = new Subscriptions();
    this.levels = new LogLevels(manager, sessions, this.log);
    const held = (this.held = new HeldCalls(() => this.input.stateTtlMs, manager));
    this.requests = new ServerRequests(manager, sessions, this.log, held);
    this.context = {
      servers: manager,
      secrets: this.secrets,
      log: this.log,
      catalog: this.catalog,
      profiles: this.profiles,
      held,
      progress: this.progress,
      subscriptions: this.subscriptions,
      relevel: (server) => this.levels.relevel(server),
      inFlightEmptied: () => this.drain.check(),
      input: this.input,
      spans: this.spans,
    };
    const delivery = new UpstreamDelivery({
      sessions,
      catalog: this.catalog,
      progress: this.progress,
      subscriptions: this.subscriptions,
      levels: this.levels,
      requests: this.requests,
      secrets: this.secrets,
    });
    manager.listen({
      added: () => this.catalog.invalidate(),
      removed: () => this.catalog.invalidate(),
      state: (u, change) => delivery.onState(u, change),
      listChanged: () => this.catalog.invalidate(),
      notification: (u, method, params, ctx) => delivery.onNotification(u, method, params, ctx),
      request: (u, req, ctx) => this.requests.request(u, req, ctx),
      usedByUiClient: (server) => usedByUiClient(this.sessions.values(), this.manager.get(server)),
      usedWithoutUi: (server) => usedWithoutUi(this.sessions.values(), this.manager.get(server)),
    });
  }

  /** Counters for status and for tests that check nothing is left behind. */
  tables(): { progress: number; progressDropped: number; subscriptions: number; relayed: number; inFlight: number } {
    return {
      progress: this.progress.size,
      progressDropped: this.progress.dropped,
      subscriptions: this.subscriptions.size,
      relayed: this.requests.size,
      inFlight: this.inFlightTotal(),
    };
  }

  /** Requests in flight to servers, over every connection. */
  private inFlightTotal(): number {
    let n = 0;
    for (const s of this.sessions.values()) n += s.inFlight.size;
    return n;
  }

  /**
   * Resolves true once no connection has a request in flight to a server (at once when none has), or
   * false after `timeoutMs` (the shutdown's grace).
   */
  whenIdle(timeoutMs: number): Promise<boolean> {
    return this.drain.wait(timeoutMs);
  }

  /** Every server's own filters now, to give {@link applyFilters} after a reload. */
  filtersSnapshot(): FiltersSnapshot {
    return filtersSnapshot(this.manager.servers);
  }

  /**
   * Applies a loaded config's profiles and the servers' filters (the manager already has the new server
   * configs): the catalog is rebuilt, each connection's filter follows its profile's new definition, and
   * a connection whose view of tools, prompts or resources changed, and only such a connection, gets that
   * kind's list_changed. `before`: {@link filtersSnapshot} taken before the manager reloaded.
   */
  applyFilters(settings: DaemonSettings, before: FiltersSnapshot): void {
    this.input.maxRounds = settings.maxInputRounds ?? CONFIG_DEFAULTS.maxInputRounds;
    this.input.stateTtlMs = settings.requestStateTtlMs ?? CONFIG_DEFAULTS.requestStateTtlMs;
    const changed = this.profiles.update(settings.profiles);
    this.catalog.invalidate();
    const sent = applyViewChanges(this.sessions.values(), this.manager.servers, before, this.profiles, changed);
    if (changed.size > 0 || sent > 0) this.log.info({ profiles: [...changed.keys()], notified: sent }, "views changed");
  }

  /** The globs of servers' filters and profiles that match nothing offered now (see filter-warnings.ts). */
  filterWarnings(): string[] {
    return filterWarnings(this.manager.servers, this.catalog, this.profiles);
  }

  /** A new downstream session whose messages go to `outbound`; `face`: how its client reached the daemon. */
  attach(outbound: Outbound, face: ClientFace = "socket"): Session {
    const id = `c${++this.sessionCounter}`;
    const session = new Session(id, outbound, this.context, this.sessionOptions);
    this.sessions.set(id, session);
    if (face !== "socket") this.faces.set(id, face);
    return session;
  }

  /** A connection ended: cancel its in-flight requests, drop its subscriptions and private sessions. */
  async detach(session: Session): Promise<void> {
    if (!this.sessions.delete(session.id)) return;
    this.faces.delete(session.id);
    this.drain.check();
    session.cancelAll("client disconnected");
    for (const key of [...session.subscriptions]) await this.subscriptions.unsubscribe(session, key).catch(() => {});
    this.levels.relevelAll();
    this.requests.forget(session);
    // A private session a call is held on for a retry in another HTTP request stays (held-calls.ts).
    await this.manager.releaseConnection(session.id, this.held.keptAt(session));
  }

  /** How a session's client reached the daemon. */
  faceOf(session: Session): ClientFace {
    return this.faces.get(session.id) ?? "socket";
  }

  /**
   * The routing hint for a server's status, if one of its server-to-client requests could not be routed;
   * none once the server is per-client.
   */
  hint(handle: Pick<Upstream, "name" | "config">): string | undefined {
    return this.requests.hint(handle);
  }
}
