import { McpdServerStateNotification, type JsonObject, type MessageContext, type RequestId } from "@mcpd/protocol";
import type { StateChange, Upstream } from "./upstream-port.js";
import type { Catalog } from "./catalog.js";
import { wantsLog, type LogLevels } from "./log-levels.js";
import type { ProgressRoutes } from "./progress-routes.js";
import type { Scrubber } from "./ports.js";
import type { ServerRequests } from "./server-requests.js";
import type { Session } from "./session.js";
import type { Subscriptions } from "./subscriptions.js";

/** The parts upstream delivery hands messages to. */
export interface DeliveryParts {
  /** Every connected session. */
  sessions: () => Iterable<Session>;
  catalog: Catalog;
  progress: ProgressRoutes;
  subscriptions: Subscriptions;
  levels: LogLevels;
  requests: ServerRequests;
  secrets: Scrubber;
}

/**
 * What servers say, delivered to the right connections: progress to the request it is for, resource
 * updates to their subscribers, a cancellation of a relayed request to its client, anything else to
 * every connection that views the server (log messages at or above each one's level, on the way of the
 * request they came with when that is known); and state changes
 * (to connections that asked for events, and as tools/list_changed in the aggregate view). A quiet
 * session (`Session.quiet`: an HTTP session with no GET stream open, no subscription and no log level)
 * is skipped for everything that answers none of its requests: nothing is encoded or kept for it.
 */
export class UpstreamDelivery {
  constructor(private readonly parts: DeliveryParts) {}

  onState(handle: Upstream, change: StateChange): void {
    const p = this.parts;
    p.catalog.invalidate();
    if (change.state === "ready") {
      // A restarted server lost its subscriptions and log level: restore them.
      p.levels.restore(handle.name);
      p.subscriptions.restore(handle);
    }
    for (const s of p.sessions()) this.stateTo(s, handle, change);
  }

  /**
   * A server's notification. A log message goes, for a connection with one request in flight to the server
   * (the one it came with, when the server's transport says), on that request's way: an HTTP session sends
   * it on the request's stream, before its answer, not on the GET stream in no order with it.
   */
  onNotification(handle: Upstream, method: string, params: JsonObject | undefined, ctx?: MessageContext): void {
    const p = this.parts;
    if (method === "notifications/progress") return p.progress.deliver(handle, method, params);
    if (method === "notifications/resources/updated") {
      const uri = params?.uri;
      const set = typeof uri === "string" ? p.subscriptions.subscribers(handle, uri) : undefined;
      if (set) for (const s of set) s.relayNotification(handle, method, params);
      return;
    }
    if (method === "notifications/cancelled") return p.requests.cancelled(handle, params);
    if (method.endsWith("/list_changed")) p.catalog.invalidate();
    for (const s of p.sessions()) {
      if (s.quiet || !s.views(handle)) continue;
      if (method !== "notifications/message") s.relayNotification(handle, method, params);
      else if (wantsLog(s.logLevel, params)) s.relayNotification(handle, method, params, onlyCall(s, handle, ctx?.relatedRequestId));
    }
  }

  private stateTo(s: Session, handle: Upstream, change: StateChange): void {
    if (s.events)
      s.send({
        jsonrpc: "2.0",
        method: McpdServerStateNotification.method,
        params: { ...change, reason: this.parts.secrets.scrub(change.reason) },
      });
    // In the aggregate view a server's tools appear or vanish with its state (unless the connection's profile leaves it out);
    // a connection that never initialized gets it on its 2026-era listens that asked for it.
    if (
      !s.quiet &&
      s.view.kind === "aggregate" &&
      (change.state === "ready" || change.previous === "ready") &&
      (s.filter === undefined || s.filter.viewsServer(handle.name))
    ) {
      s.relayNotification(handle, "notifications/tools/list_changed", undefined);
    }
  }
}

/** The session's one request in flight to `handle` (the one sent under `upstreamId`, when known); undefined for none or several. */
function onlyCall(s: Session, handle: Upstream, upstreamId: RequestId | undefined): RequestId | undefined {
  const calls = s.inFlight.callsTo(handle, upstreamId);
  return calls.length === 1 ? calls[0]?.id : undefined;
}
