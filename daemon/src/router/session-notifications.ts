import type { JsonObject, RequestId } from "@mcpd/protocol";
import type { InFlightRequests } from "./in-flight.js";
import type { ModernCalls } from "./modern-calls.js";
import type { SessionContext } from "./ports.js";
import { type SubscribedForms, subscriptionKey } from "./subscribed-forms.js";
import type { Upstream } from "./upstream-port.js";
import type { ViewFilter } from "./view-filter.js";
import type { View } from "./view-selection.js";

/** What of a session (session.ts) its notifications read and use. */
export interface NotifiedSession {
  readonly ctx: SessionContext;
  readonly view: View;
  readonly filter: ViewFilter | undefined;
  readonly initialized: boolean;
  readonly modern: ModernCalls | undefined;
  readonly inFlight: InFlightRequests;
  readonly privates: Set<Upstream> | undefined;
  readonly uriForms: SubscribedForms | undefined;
  tag(handle: Upstream, params: JsonObject | undefined): JsonObject | undefined;
  send(message: object, related?: RequestId): void;
}

/**
 * Notifications between one downstream session and the servers: the ones its client sends (cancellations,
 * roots changes) and the ones servers send it, as its view shows them.
 */

/** Handles a notification from the session's client. */
export function clientNotification(s: NotifiedSession, method: string, params: JsonObject | undefined): void {
  switch (method) {
    case "notifications/initialized":
      return; // the upstream is already initialized; forwarding it again breaks some servers
    case "notifications/cancelled": {
      const id = params?.requestId;
      if (typeof id !== "string" && typeof id !== "number") return;
      s.modern?.cancelled(id);
      s.inFlight.cancel(id, typeof params?.reason === "string" ? params.reason : "cancelled by client");
      return;
    }
    case "notifications/roots/list_changed":
      // Only to this connection's own (per-client) processes: a shared server's roots are its configured
      // `roots`, the same for every agent, so one agent's change means nothing to it.
      for (const h of s.privates ?? []) {
        if (h.state === "ready" && h.config.sharing === "per-client") h.client?.notify(method, params).catch(() => {});
      }
      return;
    default:
      return;
  }
}

/**
 * Sends a server's notification to the session as its view shows it: once initialized, or to its 2026-era
 * listens. `related`: the session's request it came with (see Outbound.send).
 */
export function relayNotification(
  s: NotifiedSession,
  handle: Upstream,
  method: string,
  params: JsonObject | undefined,
  related?: RequestId,
): void {
  if (!s.initialized && s.modern === undefined) return;
  if (method === "notifications/resources/updated" && typeof params?.uri === "string") {
    // A reload may have narrowed the view since the subscription: what it now hides is not told of.
    if (!viewsServer(s, handle) || s.filter?.allowsResource(handle.name, params.uri) === false) return;
    // Once per form this connection subscribed with: a client matches updates by the URI it used.
    const forms = s.uriForms?.of(subscriptionKey(handle, params.uri));
    if (forms && forms.size > 0) {
      for (const uri of forms) emit(s, method, s.tag(handle, { ...params, uri }));
      return;
    }
  }
  emit(s, method, s.tag(handle, params), related);
}

function emit(s: NotifiedSession, method: string, params: JsonObject | undefined, related?: RequestId): void {
  if (s.initialized) s.send({ jsonrpc: "2.0", method, params: params ?? {} }, related);
  else s.modern?.relay(method, params);
}

/** Whether notifications of this server reach the session. */
export function viewsServer(s: NotifiedSession, handle: Upstream): boolean {
  // A private (per-client) session speaks only to its owner.
  if (handle !== s.ctx.servers.get(handle.name)) return s.privates?.has(handle) === true;
  if (s.view.kind === "server") return s.view.server === handle.name;
  return s.filter === undefined || s.filter.viewsServer(handle.name);
}
