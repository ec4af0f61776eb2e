import {
  McpdSelect,
  isControlMethod,
  classify,
  LATEST_MODERN_VERSION,
  claimedVersion,
  toWireError,
  type ClientCapabilities,
  type JsonObject,
  type JsonRpcErrorObject,
  type JsonRpcRequest,
  type LogLevel,
  McpdError,
  type RequestId,
} from "@mcpd/protocol";
import type { Upstream } from "./upstream-port.js";
import { SearchView, type SearchHost } from "./tool-search/search-view.js";
import { acceptInitialize, NOT_INITIALIZED, NOT_JSON_RPC, serverViewInitializeResult } from "./handshake.js";
import { InFlightRequests } from "./in-flight.js";
import { levelOf } from "./log-levels.js";
import { ModernCalls, type ModernHost } from "./modern-calls.js";
import { OutgoingRequests } from "./outgoing-requests.js";
import type { InputAsker, Outbound, SessionContext } from "./ports.js";
import { serveOnServer } from "./serve-on-server.js";
import { routedServer, withServerMeta, withoutRoute } from "./server-meta.js";
import { handlingError, messageId, scrubbedError } from "./session-errors.js";
import { clientNotification, relayNotification, viewsServer } from "./session-notifications.js";
import type { SubscribedForms } from "./subscribed-forms.js";
import type { ViewFilter } from "./view-filter.js";
import { applySelect, chooseFaceView, noViewError, type View } from "./view-selection.js";

/** What every downstream session (one agent's connection) is configured with, from the router. */
export interface DownstreamSessionOptions {
  /** Requests one connection may have in flight; more are refused with -32063. */
  maxInFlightPerConnection: number;
  /** Handles `mcpd/*` control methods. */
  control: (session: Session, method: string, params: JsonObject | undefined) => Promise<JsonObject>;
  /** Deadline for server-to-client requests relayed to a client, in ms. */
  clientRequestTimeoutMs: number;
}

/**
 * One downstream MCP session (one socket connection): its view, its handshake, its requests in flight
 * (downstream id -> upstream request), and the requests it answers for servers. What it shares with
 * other connections (servers, progress tokens, subscriptions, logging levels) it reaches only through
 * its {@link SessionContext}; what servers send it is delivered by the Router (upstream-delivery.ts,
 * server-requests.ts).
 */
export class Session implements InputAsker, SearchHost, ModernHost {
  readonly id: string;
  private readonly out: Outbound;
  /** What it shares with the other connections (read by serve-on-server.ts and session-notifications.ts). */
  readonly ctx: SessionContext;
  private readonly opts: DownstreamSessionOptions;
  view: View = { kind: "aggregate" };
  /** What its selection (a profile, one-off tool globs) hides of the view; undefined: nothing. The router swaps it on reload. */
  filter: ViewFilter | undefined;
  /** The tool-search mode its selection asked for (docs/tool-search.md); undefined: its profile's. */
  toolSearch: SearchHost["toolSearch"];
  events = false;
  initialized = false;
  /** Its face (an HTTP endpoint) chose its view: it refuses `mcpd/select`. */
  viewChosenByFace = false;
  /**
   * A control connection: its first message was `mcpd/select {"control": true}` (the mcpd command, `@mcpd/client`
   * with `control: true`); only those may call privileged control methods. An agent's session never is one.
   */
  control = false;
  /** Messages received so far (any kind, valid or not): `control` may only be declared by the first. */
  private received = 0;
  /** Why its first message, a `mcpd/select`, failed: it then has no view (see {@link noViewError}). */
  private selectFailed: string | undefined;
  clientInfo: JsonObject | undefined;
  clientCapabilities: ClientCapabilities = {};
  /** The level its `logging/setLevel` asked for (2025 era). */
  private levelSet: LogLevel | undefined;
  readonly connectedAt = Date.now();
  /** Its requests in flight to servers (`inFlight.size` of them). */
  readonly inFlight: InFlightRequests;
  private closed = false;
  /** Private (per-client) sessions this connection owns; made by the first (most connections have none). */
  privates: Set<Upstream> | undefined;
  // Made on first use, ~0.1 KB per connection each: most connections are never asked anything, never subscribe, or use one server's view.
  private subscribed: Set<string> | undefined;
  private asked: OutgoingRequests | undefined;
  /** The URI forms of its subscriptions; made by its first `resources/subscribe`. */
  uriForms: SubscribedForms | undefined;
  private aggregateView: SearchView | undefined;
  /** Its 2026-era requests, made by the first (see modern-calls.ts); a call among them takes `input_required` as it is. */
  modern: ModernCalls | undefined;

  constructor(id: string, out: Outbound, context: SessionContext, options: DownstreamSessionOptions) {
    this.id = id;
    this.out = out;
    this.ctx = context;
    this.opts = options;
    this.inFlight = new InFlightRequests(this, context.progress, context);
  }

  /** The requests servers sent it through mcpd, waiting for its answers. */
  get outgoing(): OutgoingRequests {
    return (this.asked ??= new OutgoingRequests(this.opts.clientRequestTimeoutMs, (m) => !this.closed && this.out.send(m)));
  }

  /** The aggregate view it serves; the session is the view's host (no closures per connection). */
  get aggregate(): SearchView {
    return (this.aggregateView ??= new SearchView(this, this.ctx));
  }

  /** The subscription keys (upstream session and URI, `subscriptionKey`) it is subscribed to; made on first use (a Set costs ~0.2 KB per connection). */
  get subscriptions(): Set<string> {
    return (this.subscribed ??= new Set());
  }

  /** The least level of log messages it wants: its `logging/setLevel`'s, or the most verbose of its 2026-era calls in flight. */
  get logLevel(): LogLevel | undefined {
    return this.levelSet ?? this.modern?.logLevel;
  }

  /** Not {@link Outbound.listening} (an HTTP session without its GET stream), no subscription, no log level: broadcasts skip it. */
  get quiet(): boolean {
    return this.out.listening === false && this.logLevel === undefined && !this.subscribed?.size;
  }

  /** Sends one message to the client; `related`: the client's request a notification belongs to (see Outbound.send). */
  send(message: object, related?: RequestId): void {
    if (this.closed) return;
    const m = this.modern === undefined ? message : this.modern.adapt(message);
    if (m !== undefined) this.out.send(m, related);
  }

  reply(id: RequestId | null, result: JsonObject): void {
    this.send({ jsonrpc: "2.0", id, result });
  }

  /** Sends an error answer; a configured secret a server or library put in its message or data is masked. */
  replyError(id: RequestId | null, error: JsonRpcErrorObject): void {
    this.send({ jsonrpc: "2.0", id, error: scrubbedError(this.ctx.secrets, error) });
  }

  /**
   * Handles one parsed message from the client. Never throws: an exception here would escape the
   * socket's data handler and end the daemon, so whatever a message makes throw (a bug, or a value too
   * deeply nested for `String()`/`JSON.stringify`) costs that message an internal error, nothing more.
   */
  handle(message: unknown): void {
    try {
      this.dispatch(message);
    } catch (err) {
      this.ctx.log.error({ client: this.id, err: (err as Error)?.message ?? String(err) }, "failed to handle a client message");
      try {
        this.replyError(messageId(message), handlingError(err));
      } catch {
        // Nothing more can be done for this message; the connection stays usable.
      }
    }
  }

  private dispatch(message: unknown): void {
    this.received++;
    const kind = classify(message);
    if (kind === "invalid") return this.replyError(messageId(message), NOT_JSON_RPC);
    const msg = message as JsonObject;
    if (kind === "request") {
      this.onRequest(msg as unknown as JsonRpcRequest);
    } else if (kind === "notification") {
      clientNotification(this, msg.method as string, msg.params as JsonObject | undefined);
    } else {
      // An answer when it was never asked anything is ignored, as one to no request of its is.
      this.asked?.answer(msg);
    }
  }

  private onRequest(req: JsonRpcRequest): void {
    const { id, method } = req;
    if (this.selectFailed !== undefined) return this.replyError(id, noViewError(this.selectFailed));
    if (isControlMethod(method)) {
      if (method === McpdSelect.method) {
        this.select(req);
        return;
      }
      this.opts.control(this, method, req.params).then(
        (result) => this.reply(id, result),
        (err: unknown) => this.replyError(id, toWireError(err)),
      );
      return;
    }
    if (claimedVersion(req.params) !== undefined) return (this.modern ??= new ModernCalls(this, this.ctx)).serve(req);
    if (method === "ping") return this.reply(id, {});
    if (method === "initialize") {
      // The handshake is accepted at once, before any await: a client may send its requests right behind initialize.
      this.viewInit(acceptInitialize(this, req.params)).then(
        (result) => this.reply(id, result),
        (err: unknown) => this.replyError(id, toWireError(err)),
      );
      return;
    }
    if (!this.initialized) return this.replyError(id, NOT_INITIALIZED);
    this.route(id, method, req.params);
  }

  /** Serves an MCP request as an initialized connection does: on the server it names, its view's server, or the aggregate view. */
  route(id: RequestId, method: string, params: JsonObject | undefined): void {
    const refused = this.inFlight.refusal(id, this.opts.maxInFlightPerConnection);
    if (refused !== undefined) return this.replyError(id, refused);
    const routed = routedServer(params);
    if (routed !== undefined) this.serveOnServer(id, routed, method, withoutRoute(params as JsonObject));
    else if (this.view.kind === "server") this.serveOnServer(id, this.view.server, method, params);
    else this.aggregate.serve(id, method, params);
  }

  private select(req: JsonRpcRequest): void {
    const made = applySelect(this, req.params, this.received === 1, this.ctx);
    if ("result" in made) return this.reply(req.id, made.result);
    if (this.received === 1 && !this.viewChosenByFace) this.selectFailed = made.error.message;
    this.replyError(req.id, made.error);
  }

  /** Its view as its face chose it (an HTTP endpoint); the error when it cannot be chosen. See chooseFaceView. */
  chooseView(choice: Parameters<typeof chooseFaceView>[1]): JsonRpcErrorObject | undefined {
    return chooseFaceView(this, choice, this.ctx);
  }

  /** What the view answers to initialize (what `server/discover` and listens read in the 2026 era). */
  async viewInit(protocolVersion: string = LATEST_MODERN_VERSION): Promise<JsonObject> {
    if (this.view.kind !== "server") return this.aggregate.initializeResult(protocolVersion);
    const handle = await this.resolveHandle(this.view.server);
    const client = await handle.whenReady(handle.config.timeout);
    return serverViewInitializeResult(handle.name, client.initializeResult, protocolVersion);
  }

  /** The connection ended: its requests are cancelled upstream, those it was asked fail. */
  cancelAll(reason: string): void {
    this.closed = true;
    this.inFlight.cancelAll(reason);
    this.asked?.failAll(reason);
  }

  /** Answers every request still in flight with an error (shutdown). */
  failAll(error: McpdError): void {
    this.inFlight.failAll(error);
  }

  /** The session it uses for a server; `capabilities`: what the request's client declared (a 2026-era request's own envelope). */
  async resolveHandle(server: string, capabilities: ClientCapabilities = this.clientCapabilities): Promise<Upstream> {
    const handle = await this.ctx.servers.handleFor(server, this.id, capabilities);
    if (handle === this.ctx.servers.get(server)) return handle;
    // A private session made for a connection that closed meanwhile would never be ended: end it now.
    if (this.closed) {
      void this.ctx.servers.releaseConnection(this.id).catch(() => {}); // nothing waits: the connection is gone
      throw new McpdError("MCPD_ABORTED", "the connection closed");
    }
    (this.privates ??= new Set()).add(handle);
    return handle;
  }

  /**
   * Transparent semantics: one server, unprefixed names. `clientUri`: the aggregate view's form (`mcpd://<server>/<uri>`)
   * of the resource URI in `params`, which the answer and the updates of a subscription are given back in.
   */
  serveOnServer(id: RequestId, server: string, method: string, params: JsonObject | undefined, clientUri?: string, checked = false): void {
    serveOnServer(this, id, server, method, params, clientUri, checked);
  }

  /** Answers `logging/setLevel` for this connection. */
  setLevel(id: RequestId, params: JsonObject | undefined): void {
    const level = levelOf(params);
    if (typeof level !== "string") return this.replyError(id, level);
    this.levelSet = level;
    this.relevelViewed();
    this.reply(id, {});
  }

  relevelViewed(): void {
    for (const h of this.ctx.servers.servers) if (this.views(h)) this.ctx.relevel(h.name);
  }

  /** A server's params as this connection's view shows them: tagged with the server in the aggregate view. */
  tag(handle: Upstream, params: JsonObject | undefined): JsonObject | undefined {
    return this.view.kind === "aggregate" ? withServerMeta(params, handle.name) : params;
  }

  /** Sends a server's notification to this connection as its view shows it: once initialized, or to its 2026-era listens. */
  relayNotification(handle: Upstream, method: string, params: JsonObject | undefined, related?: RequestId): void {
    relayNotification(this, handle, method, params, related);
  }

  /** Whether notifications of this server reach this session. */
  views(handle: Upstream): boolean {
    return viewsServer(this, handle);
  }

  /** This connection in messages: its id and, once initialized, its client's name. */
  get label(): string {
    const name = this.clientInfo?.name;
    return typeof name === "string" ? `${this.id} "${name.slice(0, 100)}"` : this.id;
  }
}
