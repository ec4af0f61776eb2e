import { WireCode, toWireError, type ClientCapabilities, type JsonObject, type JsonRpcErrorObject, type RequestId } from "@mcpd/protocol";
import { callerCapabilities, declaresUi } from "./app-meta.js";
import { renamespaced } from "./resource-uris.js";
import { appOnlyGate, gateOnServer, outOfView } from "./server-view-gate.js";
import type { InFlightRequests } from "./in-flight.js";
import type { ModernCalls } from "./modern-calls.js";
import type { SessionContext, Subscriber } from "./ports.js";
import { SubscribedForms, changeSubscription } from "./subscribed-forms.js";
import type { Upstream } from "./upstream-port.js";
import type { ViewFilter } from "./view-filter.js";
import type { View } from "./view-selection.js";
import { aggregateAnswer } from "./view-uris.js";

/** What of a session (session.ts) serving a request on one server reads and uses. */
export interface ServingSession extends Subscriber {
  readonly ctx: SessionContext;
  readonly view: View;
  readonly filter: ViewFilter | undefined;
  readonly clientCapabilities: ClientCapabilities;
  readonly inFlight: InFlightRequests;
  readonly modern: ModernCalls | undefined;
  uriForms: SubscribedForms | undefined;
  resolveHandle(server: string, capabilities?: ClientCapabilities): Promise<Upstream>;
  setLevel(id: RequestId, params: JsonObject | undefined): void;
  reply(id: RequestId | null, result: JsonObject): void;
  replyError(id: RequestId | null, error: JsonRpcErrorObject): void;
}

/**
 * A session's request served on one server, with that server's own (unprefixed) names: the transparent
 * view's every request, and the aggregate view's once it has found the server. `clientUri`: the aggregate
 * view's form (`mcpd://<server>/<uri>`) of the resource URI in `params`, which the answer and the updates of
 * a subscription are given back in. `checked`: the aggregate view already passed the request's filters.
 */
export function serveOnServer(
  s: ServingSession,
  id: RequestId,
  server: string,
  method: string,
  params: JsonObject | undefined,
  clientUri: string | undefined,
  checked: boolean,
): void {
  // A confined session's request to a server outside its view is refused before the name is looked up, an
  // unknown server alike: the lookup's error names every configured server.
  const outside = s.filter?.confinement !== undefined ? outOfView(s.filter, server, method) : undefined;
  if (outside !== undefined) return s.replyError(id, toWireError(outside));
  let handle: Upstream;
  try {
    handle = s.ctx.servers.require(server);
  } catch (err) {
    s.replyError(id, toWireError(err));
    return;
  }
  // Filters are checked before any process is started for the request; `checked`: the aggregate view did.
  const caps = callerCapabilities(s, id);
  const app = { ui: declaresUi(caps), tools: handle.tools };
  const gate = checked ? appOnlyGate(server, method, params, app) : gateOnServer(handle.config, s.filter, method, params, app);
  if (gate !== undefined && "refuse" in gate) return s.replyError(id, toWireError(gate.refuse));
  const adapt = s.view.kind === "aggregate" ? aggregateAnswer(s.ctx.catalog, s.filter, server, method, gate?.adapt) : gate?.adapt;
  if (handle.config.sharing === "per-client" || app.ui) {
    s.inFlight.after(
      id,
      s.resolveHandle(server, caps),
      (h) => dispatchOnServer(s, id, h, method, params, clientUri, adapt),
      (err) => s.replyError(id, toWireError(err)),
    );
    return;
  }
  dispatchOnServer(s, id, handle, method, params, clientUri, adapt);
}

function dispatchOnServer(
  s: ServingSession,
  id: RequestId,
  handle: Upstream,
  method: string,
  params: JsonObject | undefined,
  clientUri: string | undefined,
  adapt: ((result: JsonObject) => JsonObject) | undefined,
): void {
  if (method === "logging/setLevel") return s.setLevel(id, params);
  if (method === "resources/subscribe" || method === "resources/unsubscribe") {
    const uri = params?.uri;
    if (typeof uri !== "string") {
      s.replyError(id, { code: WireCode.InvalidParams, message: `${method}: "uri" must be a string` });
      return;
    }
    const forms = method === "resources/subscribe" ? (s.uriForms ??= new SubscribedForms()) : s.uriForms;
    changeSubscription(s.ctx.subscriptions, s, forms, method, handle, uri, clientUri ?? uri).then(
      () => s.reply(id, {}),
      (err: unknown) => s.replyError(id, toWireError(err)),
    );
    return;
  }
  if (method === "resources/read" && clientUri !== undefined && typeof params?.uri === "string") {
    s.inFlight.forward(id, handle, method, params, (result) => renamespaced(result, clientUri, params.uri as string));
    return;
  }
  // A tool the server does not list goes to the server all the same: in a server's view mcpd does not
  // judge names (only filters do), and the server's own answer is what a client of that server expects.
  s.inFlight.forward(id, handle, method, params, adapt);
}
