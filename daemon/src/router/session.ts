import {
  ForbiddenError,
  LATEST_PROTOCOL_VERSION,
  LOG_LEVELS,
  McpdError,
  NotFoundError,
  RequestTimeoutError,
  SUPPORTED_PROTOCOL_VERSIONS,
  WireCode,
  MCPD_SERVER_META,
  McpdSelect,
  McpdServerStateNotification,
  classify,
  fromWireError,
  isControlMethod,
  isObject,
  toWireError,
  type ClientCapabilities,
  type JsonObject,
  type JsonRpcErrorObject,
  type JsonRpcRequest,
  type LogLevel,
  type RequestId,
} from "@mcpd/protocol";
import type { ServerHandle, StateChange } from "../server-handle.js";
import type { Router } from "./router.js";
import { AggregateView } from "./aggregate-view.js";
import { Cancellation } from "../cancellation.js";
import { closeMatches } from "./close-matches.js";

/** Where a session's outgoing messages go (a socket, in the daemon). */
export interface Outbound {
  /** Queues one message. Returns false when the connection is gone or over its buffer bound. */
  send(message: object): boolean;
}

export interface SessionOptions {
  router: Router;
  /** Requests one connection may have in flight; more are refused with -32063. */
  maxInFlightPerConnection: number;
  /** Handles `mcpd/*` control methods. */
  control: (session: Session, method: string, params: JsonObject | undefined) => Promise<JsonObject>;
  /** Deadline for server-to-client requests relayed to a client, in ms. */
  clientRequestTimeoutMs: number;
}

/** One downstream request being served upstream. */
export class InFlight {
  readonly cancellation = new Cancellation();
  timer: NodeJS.Timeout | undefined;
  progressToken: string | undefined;
  /** The id the upstream transport gave this request. */
  upstreamId: RequestId | undefined;
  cancelled = false;
  private readonly startedAt = Date.now();

  constructor(
    readonly id: RequestId,
    readonly handle: ServerHandle,
    private readonly timeoutMs: number,
    private readonly maxTotalMs: number,
  ) {
    this.arm(timeoutMs);
  }

  private arm(ms: number): void {
    if (!(ms > 0) || !Number.isFinite(ms)) return;
    this.timer = setTimeout(() => this.cancellation.cancel(new RequestTimeoutError(this.timeoutMs)), ms);
  }

  /** Progress arrived: restart the timeout, never past the maximum total. */
  touch(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    const left = this.startedAt + this.maxTotalMs - Date.now();
    this.arm(Math.max(1, Math.min(this.timeoutMs, left)));
  }

  clear(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

type View = { kind: "aggregate" } | { kind: "server"; server: string };

/** Largest clientInfo kept as sent, in bytes of JSON; a bigger one is cut down. */
const MAX_CLIENT_INFO_BYTES = 4096;

/**
 * The clientInfo kept for status and logs. It is echoed to every `mcpd/status` caller, so a value with no
 * JSON form (nested too deep to serialize) or a huge one must not be kept as is: it would make every
 * status answer fail to encode. Such a value is cut down to its string name/version/title (256 chars each).
 */
function boundedClientInfo(value: unknown): JsonObject | undefined {
  if (!isObject(value)) return undefined;
  try {
    if (JSON.stringify(value).length <= MAX_CLIENT_INFO_BYTES) return value;
  } catch {
    // No JSON form: fall through to the cut-down copy.
  }
  const out: JsonObject = {};
  for (const k of ["name", "version", "title"]) {
    const v = value[k];
    if (typeof v === "string") out[k] = v.slice(0, 256);
  }
  return out;
}

const MCPD_META = MCPD_SERVER_META;

/**
 * A resources/read answer for a client that asked by a namespaced URI: every content's `uri` (the server's
 * own) gets the same `mcpd://<server>/` prefix back. Anything not shaped as expected is left as it is.
 */
function renamespaced(result: JsonObject, prefix: string): JsonObject {
  const contents = result.contents;
  if (!Array.isArray(contents)) return result;
  return { ...result, contents: contents.map((c) => (isObject(c) && typeof c.uri === "string" ? { ...c, uri: `${prefix}${c.uri}` } : c)) };
}

/**
 * One downstream MCP session (one socket connection): its view, its handshake, its requests in flight
 * (downstream id -> upstream request), and the requests it answers for servers.
 */
export class Session {
  readonly id: string;
  readonly router: Router;
  private readonly out: Outbound;
  private readonly opts: SessionOptions;
  view: View = { kind: "aggregate" };
  events = false;
  initialized = false;
  /**
   * Whether this is a control connection: one whose first message was `mcpd/select {"control": true}` (the
   * mcpd command, `@mcpd/client` with `control: true`). Only those may call the privileged control methods
   * (declared `privileged` in @mcpd/protocol). An agent's MCP session never becomes one: it has spoken before.
   */
  control = false;
  /** Messages received so far (any kind, valid or not): `control` may only be declared by the first. */
  private received = 0;
  clientInfo: JsonObject | undefined;
  clientCapabilities: ClientCapabilities = {};
  logLevel: LogLevel | undefined;
  readonly connectedAt = Date.now();
  readonly subscriptions = new Set<string>();
  /** `<server>\0<uri>` -> the URI forms this connection subscribed with (the server's, or namespaced). */
  private readonly uriForms = new Map<string, Set<string>>();
  private readonly inFlight = new Map<RequestId, InFlight>();
  private readonly outgoing = new Map<number, { resolve: (v: JsonObject) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private outgoingId = 0;
  private closed = false;
  private readonly aggregate: AggregateView;

  constructor(id: string, out: Outbound, options: SessionOptions) {
    this.id = id;
    this.out = out;
    this.opts = options;
    this.router = options.router;
    this.aggregate = new AggregateView(this);
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  send(message: object): void {
    if (!this.closed) this.out.send(message);
  }

  private reply(id: RequestId | null, result: JsonObject): void {
    this.send({ jsonrpc: "2.0", id, result });
  }

  /** Sends an error answer; a configured secret a server or library put in its message or data is masked. */
  replyError(id: RequestId | null, error: JsonRpcErrorObject): void {
    const { message, data, ...rest } = error;
    const clean: JsonRpcErrorObject = { ...rest, message: typeof message === "string" ? this.router.secrets.scrub(message) : message };
    const cleanData = data === undefined ? undefined : this.router.secrets.scrubValue(data);
    if (cleanData !== undefined) clean.data = cleanData;
    this.send({ jsonrpc: "2.0", id, error: clean });
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
      const id = isObject(message) && (typeof message.id === "string" || typeof message.id === "number") ? message.id : null;
      this.router.log.error({ client: this.id, err: (err as Error)?.message ?? String(err) }, "failed to handle a client message");
      try {
        this.replyError(id, { code: WireCode.InternalError, message: `Internal error handling the message: ${(err as Error)?.message ?? "unknown"}` });
      } catch {
        // Nothing more can be done for this message; the connection stays usable.
      }
    }
  }

  private dispatch(message: unknown): void {
    this.received++;
    const kind = classify(message);
    if (kind === "invalid") {
      const id = isObject(message) && (typeof message.id === "string" || typeof message.id === "number") ? message.id : null;
      this.replyError(id, { code: WireCode.InvalidRequest, message: `Invalid request: not a JSON-RPC 2.0 message`, data: { mcpdCode: "MCPD_PROTOCOL_VIOLATION" } });
      return;
    }
    const msg = message as JsonObject;
    if (kind === "request") {
      this.onRequest(msg as unknown as JsonRpcRequest);
    } else if (kind === "notification") {
      this.onNotification(msg.method as string, msg.params as JsonObject | undefined);
    } else {
      this.onResponse(msg);
    }
  }

  private onRequest(req: JsonRpcRequest): void {
    const { id, method } = req;
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
    if (method === "ping") return this.reply(id, {});
    if (method === "initialize") {
      this.initialize(req).then(
        (result) => this.reply(id, result),
        (err: unknown) => this.replyError(id, toWireError(err)),
      );
      return;
    }
    if (this.inFlight.has(id)) {
      this.replyError(id, { code: WireCode.InvalidRequest, message: `Request id ${JSON.stringify(id)} is already in flight on this connection` });
      return;
    }
    if (this.inFlight.size >= this.opts.maxInFlightPerConnection) {
      this.replyError(id, {
        code: WireCode.TooManyRequests,
        message: `Too many requests in flight (${this.opts.maxInFlightPerConnection} per connection)`,
        data: { mcpdCode: "MCPD_TOO_MANY_REQUESTS" },
      });
      return;
    }
    const params = req.params;
    const meta = params?._meta;
    const routed = isObject(meta) && typeof meta[MCPD_META] === "string" ? (meta[MCPD_META] as string) : undefined;
    if (routed !== undefined) {
      const { [MCPD_META]: _drop, ...rest } = meta as JsonObject;
      const clean: JsonObject = { ...params };
      if (Object.keys(rest).length > 0) clean._meta = rest;
      else delete clean._meta;
      this.serveOnServer(id, routed, method, clean);
    } else if (this.view.kind === "server") {
      this.serveOnServer(id, this.view.server, method, params);
    } else {
      this.aggregate.serve(id, method, params);
    }
  }

  private select(req: JsonRpcRequest): void {
    const control = req.params?.control;
    if (control !== undefined && typeof control !== "boolean") {
      this.replyError(req.id, { code: WireCode.InvalidParams, message: `${McpdSelect.method}: "control" must be a boolean`, data: { mcpdCode: "MCPD_PROTOCOL_VIOLATION" } });
      return;
    }
    // Checked first: a session that already sent initialize is exactly what must never become control.
    if (control === true && this.received !== 1) {
      this.replyError(
        req.id,
        toWireError(
          new ForbiddenError(
            McpdSelect.method,
            `${McpdSelect.method} {"control": true} must be the first message on a connection: a connection that has already ` +
              "spoken (an agent's MCP session, or one opened by `mcpd connect`) cannot become a control connection",
          ),
        ),
      );
      return;
    }
    if (this.initialized) {
      this.replyError(req.id, { code: WireCode.InvalidRequest, message: `${McpdSelect.method} must come before initialize` });
      return;
    }
    const server = req.params?.server;
    if (server !== undefined) {
      if (typeof server !== "string") {
        this.replyError(req.id, { code: WireCode.InvalidParams, message: `${McpdSelect.method}: "server" must be a string` });
        return;
      }
      try {
        this.router.manager.require(server);
      } catch (err) {
        this.replyError(req.id, toWireError(err));
        return;
      }
      this.view = { kind: "server", server };
    } else {
      this.view = { kind: "aggregate" };
    }
    this.events = req.params?.events === true;
    if (control === true) this.control = true;
    const result: JsonObject = this.view.kind === "server" ? { view: "server", server: this.view.server } : { view: "aggregate" };
    if (this.control) result.control = true;
    this.reply(req.id, result);
  }

  private negotiate(requested: unknown): string {
    return typeof requested === "string" && (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(requested)
      ? requested
      : LATEST_PROTOCOL_VERSION;
  }

  private async initialize(req: JsonRpcRequest): Promise<JsonObject> {
    const p = req.params ?? {};
    this.clientInfo = boundedClientInfo(p.clientInfo);
    this.clientCapabilities = isObject(p.capabilities) ? (p.capabilities as ClientCapabilities) : {};
    const protocolVersion = this.negotiate(p.protocolVersion);
    this.initialized = true;
    if (this.view.kind === "server") {
      const handle = await this.resolveHandle(this.view.server);
      const client = await handle.whenReady(handle.config.timeout);
      const init = client.initializeResult;
      const result: JsonObject = { protocolVersion, capabilities: init?.capabilities ?? {}, serverInfo: init?.serverInfo ?? { name: handle.name, version: "0" } };
      if (init?.instructions !== undefined) result.instructions = init.instructions;
      return result;
    }
    return this.aggregate.initializeResult(protocolVersion);
  }

  private onNotification(method: string, params: JsonObject | undefined): void {
    switch (method) {
      case "notifications/initialized":
        return; // the upstream is already initialized; forwarding it again breaks some servers
      case "notifications/cancelled": {
        const id = params?.requestId;
        if (typeof id === "string" || typeof id === "number") this.cancel(id, typeof params?.reason === "string" ? params.reason : "cancelled by client");
        return;
      }
      case "notifications/roots/list_changed":
        // Only to this connection's own (per-client) processes: a shared server's roots are its configured
        // `roots`, the same for every agent, so one agent's change means nothing to it.
        for (const h of this.privates) {
          if (h.state === "ready") h.client?.transport.notify(method, params).catch(() => {});
        }
        return;
      default:
        return;
    }
  }

  private onResponse(msg: JsonObject): void {
    const id = msg.id;
    if (typeof id !== "number") return;
    const pending = this.outgoing.get(id);
    if (!pending) return;
    this.outgoing.delete(id);
    clearTimeout(pending.timer);
    if (isObject(msg.error)) pending.reject(fromWireError(msg.error as unknown as JsonRpcErrorObject));
    else pending.resolve((isObject(msg.result) ? msg.result : {}) as JsonObject);
  }

  /** Cancels one in-flight request: the upstream gets notifications/cancelled, the client no answer. */
  cancel(id: RequestId, reason: string): void {
    const entry = this.inFlight.get(id);
    if (!entry) return;
    entry.cancelled = true;
    entry.cancellation.cancel(new McpdError("MCPD_ABORTED", reason, { wireCode: WireCode.Cancelled }));
  }

  cancelAll(reason: string): void {
    this.closed = true;
    for (const id of [...this.inFlight.keys()]) this.cancel(id, reason);
    for (const [, p] of this.outgoing) {
      clearTimeout(p.timer);
      p.reject(new McpdError("MCPD_CONNECTION_LOST", `Client disconnected: ${reason}`, { wireCode: WireCode.UpstreamClosed }));
    }
    this.outgoing.clear();
  }

  /** Answers every request still in flight with an error (shutdown). */
  failAll(error: McpdError): void {
    for (const [id, entry] of this.inFlight) {
      entry.cancelled = true;
      entry.cancellation.cancel(error);
      this.replyError(id, toWireError(error));
    }
  }

  /** Private (per-client) sessions this connection owns. */
  private readonly privates = new Set<ServerHandle>();

  private async resolveHandle(server: string): Promise<ServerHandle> {
    const handle = await this.router.manager.handleFor(server, this.id);
    this.router.adopt(handle);
    if (handle !== this.router.manager.get(server)) this.privates.add(handle);
    return handle;
  }

  /**
   * Transparent semantics: one server, unprefixed names. `clientUri`: the aggregate view's namespaced
   * form (`mcpd://<server>/<uri>`) of the resource URI in `params`, which the answer and the updates of a
   * subscription are given back in.
   */
  serveOnServer(id: RequestId, server: string, method: string, params: JsonObject | undefined, clientUri?: string): void {
    let handle: ServerHandle;
    try {
      handle = this.router.manager.require(server);
    } catch (err) {
      this.replyError(id, toWireError(err));
      return;
    }
    if (handle.config.sharing === "per-client") {
      this.resolveHandle(server).then(
        (h) => this.dispatchOnServer(id, h, method, params, clientUri),
        (err: unknown) => this.replyError(id, toWireError(err)),
      );
      return;
    }
    this.dispatchOnServer(id, handle, method, params, clientUri);
  }

  private dispatchOnServer(id: RequestId, handle: ServerHandle, method: string, params: JsonObject | undefined, clientUri?: string): void {
    if (method === "logging/setLevel") return this.setLevel(id, params);
    if (method === "resources/subscribe" || method === "resources/unsubscribe") {
      const uri = params?.uri;
      if (typeof uri !== "string") {
        this.replyError(id, { code: WireCode.InvalidParams, message: `${method}: "uri" must be a string` });
        return;
      }
      this.subscription(id, method, handle, uri, clientUri ?? uri);
      return;
    }
    if (method === "resources/read" && clientUri !== undefined && typeof params?.uri === "string") {
      const prefix = clientUri.slice(0, clientUri.length - params.uri.length);
      this.forward(id, handle, method, params, (result) => renamespaced(result, prefix));
      return;
    }
    // A tool the server does not list goes to the server all the same: in a server's view mcpd does not
    // judge names, and the server's own answer is what a client of that server expects.
    this.forward(id, handle, method, params);
  }

  setLevel(id: RequestId, params: JsonObject | undefined): void {
    const level = params?.level;
    if (typeof level !== "string" || !(LOG_LEVELS as readonly string[]).includes(level)) {
      this.replyError(id, { code: WireCode.InvalidParams, message: `logging/setLevel: "level" must be one of ${LOG_LEVELS.join(", ")}` });
      return;
    }
    this.logLevel = level as LogLevel;
    for (const h of this.router.manager.servers) if (this.views(h)) this.router.relevel(h.name);
    this.reply(id, {});
  }

  /**
   * Subscribes to or unsubscribes from (server, `uri`) as `clientUri` (the form the client wrote: the
   * server's URI, or the aggregate view's namespaced one). Updates are sent in every form subscribed; the
   * upstream subscription of this connection ends with its last form.
   */
  subscription(id: RequestId, method: string, handle: ServerHandle, uri: string, clientUri = uri): void {
    const key = `${handle.name}\0${uri}`;
    let op: Promise<void>;
    if (method === "resources/subscribe") {
      op = this.router.subscribe(this, handle, uri, handle.config.timeout).then(() => {
        const forms = this.uriForms.get(key) ?? new Set<string>();
        forms.add(clientUri);
        this.uriForms.set(key, forms);
      });
    } else {
      const forms = this.uriForms.get(key);
      forms?.delete(clientUri);
      if (forms && forms.size > 0) op = Promise.resolve();
      else {
        this.uriForms.delete(key);
        op = this.router.unsubscribe(this, key);
      }
    }
    op.then(
      () => this.reply(id, {}),
      (err: unknown) => this.replyError(id, toWireError(err)),
    );
  }

  /**
   * Sends one request upstream and its answer back, with progress, cancellation and the daemon's timeout.
   * `adapt` rewrites a successful answer for this client (it must not throw).
   */
  forward(id: RequestId, handle: ServerHandle, method: string, params: JsonObject | undefined, adapt?: (result: JsonObject) => JsonObject): void {
    const entry = new InFlight(id, handle, handle.config.timeout, handle.config.maxTotalTimeout);
    this.inFlight.set(id, entry);
    let upstreamParams = params;
    const meta = params?._meta;
    if (isObject(meta) && (typeof meta.progressToken === "string" || typeof meta.progressToken === "number")) {
      const token = this.router.registerProgress(this, meta.progressToken, entry);
      entry.progressToken = token;
      upstreamParams = { ...params, _meta: { ...meta, progressToken: token } };
    }
    handle
      .request(method, upstreamParams, {
        cancellation: entry.cancellation,
        timeout: 0,
        waitMs: handle.config.timeout,
        onRequestId: (uid) => (entry.upstreamId = uid),
      })
      .then(
        (result) => {
          if (!entry.cancelled) this.reply(id, adapt ? adapt(result) : result);
        },
        (err: unknown) => {
          if (!entry.cancelled) this.replyError(id, toWireError(err));
        },
      )
      .finally(() => {
        entry.clear();
        if (entry.progressToken !== undefined) this.router.releaseProgress(entry.progressToken);
        this.inFlight.delete(id);
      });
  }

  /** Relays a server-to-client request to this client and waits for its answer. */
  sendRequest(handle: ServerHandle, method: string, params: JsonObject | undefined): { id: number; result: Promise<JsonObject> } {
    const id = ++this.outgoingId;
    const result = new Promise<JsonObject>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.outgoing.delete(id);
        reject(new RequestTimeoutError(this.opts.clientRequestTimeoutMs));
      }, this.opts.clientRequestTimeoutMs);
      this.outgoing.set(id, { resolve, reject, timer });
    });
    this.send({ jsonrpc: "2.0", id, method, params: this.tag(handle, params) });
    return { id, result };
  }

  /** The server cancelled a request it had sent to this client. */
  cancelOutgoing(id: number, reason?: string): void {
    const pending = this.outgoing.get(id);
    if (!pending) return;
    this.outgoing.delete(id);
    clearTimeout(pending.timer);
    pending.reject(new McpdError("MCPD_ABORTED", reason ?? "cancelled by server"));
    this.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, ...(reason ? { reason } : {}) } });
  }

  /** In the aggregate view, messages from a server carry `_meta["mcpd/server"]`. */
  private tag(handle: ServerHandle, params: JsonObject | undefined): JsonObject | undefined {
    if (this.view.kind !== "aggregate") return params;
    const meta = isObject(params?._meta) ? (params?._meta as JsonObject) : {};
    return { ...params, _meta: { ...meta, [MCPD_META]: handle.name } };
  }

  relayNotification(handle: ServerHandle, method: string, params: JsonObject | undefined): void {
    if (!this.initialized) return;
    if (method === "notifications/resources/updated" && typeof params?.uri === "string") {
      // Once per form this connection subscribed with: a client matches updates by the URI it used.
      const forms = this.uriForms.get(`${handle.name}\0${params.uri}`);
      if (forms && forms.size > 0) {
        for (const uri of forms) this.send({ jsonrpc: "2.0", method, params: this.tag(handle, { ...params, uri }) ?? {} });
        return;
      }
    }
    this.send({ jsonrpc: "2.0", method, params: this.tag(handle, params) ?? {} });
  }

  onServerState(handle: ServerHandle, change: StateChange): void {
    if (this.events) this.send({ jsonrpc: "2.0", method: McpdServerStateNotification.method, params: { ...change, reason: this.router.secrets.scrub(change.reason) } });
    // In the aggregate view a server's tools appear or vanish with its state.
    if (this.initialized && this.view.kind === "aggregate" && (change.state === "ready" || change.previous === "ready")) {
      this.send({ jsonrpc: "2.0", method: "notifications/tools/list_changed", params: { _meta: { [MCPD_META]: handle.name } } });
    }
  }

  /** Whether notifications of this server reach this session. */
  views(handle: ServerHandle): boolean {
    // A private (per-client) session speaks only to its owner.
    if (handle !== this.router.manager.get(handle.name)) return this.privates.has(handle);
    if (this.view.kind === "server") return this.view.server === handle.name;
    return true;
  }

  wantsLog(params: JsonObject | undefined): boolean {
    if (this.logLevel === undefined) return true;
    const level = params?.level;
    return typeof level !== "string" || LOG_LEVELS.indexOf(level as LogLevel) >= LOG_LEVELS.indexOf(this.logLevel);
  }

  /** This connection in messages: its id and, once initialized, its client's name. */
  get label(): string {
    const name = this.clientInfo?.name;
    return typeof name === "string" ? `${this.id} "${name.slice(0, 100)}"` : this.id;
  }

  declared(capability: string): boolean {
    return isObject((this.clientCapabilities as JsonObject)[capability]);
  }

  /** Whether this session's request with that upstream id is in flight to the server. */
  hasUpstreamRequest(handle: ServerHandle, upstreamId: RequestId): boolean {
    for (const e of this.inFlight.values()) if (e.handle === handle && e.upstreamId === upstreamId) return true;
    return false;
  }

  hasInFlightTo(handle: ServerHandle): boolean {
    for (const e of this.inFlight.values()) if (e.handle === handle) return true;
    return false;
  }

  /** Whether this connection owns that private (per-client) session. */
  ownsPrivate(handle: ServerHandle): boolean {
    return this.privates.has(handle);
  }

  /**
   * An unknown tool, prompt or resource: the message quotes what was asked (cut to a bounded length) and
   * suggests at most a few close names (see closeMatches), never the whole list, which can run to
   * hundreds: `Unknown tool "fx__ecoh"; did you mean fx__echo? (104 tools; tools/list lists them)`.
   */
  static notFound(
    code: "MCPD_UNKNOWN_TOOL" | "MCPD_UNKNOWN_PROMPT" | "MCPD_UNKNOWN_RESOURCE",
    what: string,
    wanted: string,
    names: readonly string[],
    list: { noun: string; method: string },
  ): NotFoundError {
    const close = closeMatches(wanted, names);
    const count = `${names.length} ${list.noun}${names.length === 1 ? "" : "s"}; ${list.method} lists them`;
    const hint = close.length > 0 ? `did you mean ${close.join(", ")}? (${count})` : `no ${list.noun} has a close name (${count})`;
    return new NotFoundError(code, `${what}; ${hint}`);
  }
}

