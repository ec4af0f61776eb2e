import { EventEmitter } from "node:events";
import {
  CapabilityError,
  LATEST_PROTOCOL_VERSION,
  McpRemoteError,
  ProtocolError,
  SUPPORTED_PROTOCOL_VERSIONS,
  WireCode,
  silentLogger,
  type ClientCapabilities,
  type Implementation,
  type InitializeResult,
  type JsonObject,
  type JsonRpcRequest,
  type Logger,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type ServerCapabilities,
  type Tool,
} from "@mcpd/protocol";
import type { CloseInfo, MCPTransport, MessageContext, RequestOptions } from "@mcpd/transports";
import { RUNTIME_DEFAULTS } from "./defaults.js";

export type ListKind = "tools" | "prompts" | "resources";

/** Hands a server-to-client request to the layer above. Throw to answer with an error. */
export type UpstreamRequestHandler = (request: JsonRpcRequest, context: MessageContext) => Promise<JsonObject>;

export interface MCPClientOptions {
  clientInfo?: Implementation;
  capabilities?: ClientCapabilities;
  logger?: Logger;
  /** Deadline for initialize, in ms. */
  initializeTimeoutMs?: number;
  /**
   * Least time between the starts of two re-reads of one list, in ms: a server that sends list_changed
   * faster gets its list re-read at this rate. Default `RUNTIME_DEFAULTS.listRefreshMinIntervalMs` (1000).
   */
  listRefreshMinIntervalMs?: number;
}

/** Re-reads of one list asked for back to back (while one ran, or too soon after) before the list counts as unsettled. */
const UNSETTLED_AFTER = 3;

/** The re-reads of one list: at most one running and one queued behind it. */
interface ListRefresh {
  running: Promise<void> | undefined;
  queued: Promise<void> | undefined;
  /** The queued re-read's wait for the rate limit, and how to end that wait early (close). */
  timer: NodeJS.Timeout | undefined;
  wake: (() => void) | undefined;
  /** Ends the unsettled mark once no re-read was asked for during one interval. */
  settleTimer: NodeJS.Timeout | undefined;
  lastStartAt: number;
  lastEndAt: number;
  /** Re-reads asked for back to back; reset by a quiet interval. */
  backToBack: number;
  unsettled: boolean;
  /** The list_changed notification to relay once the next re-read (the one that covers it) is done. */
  notice: [method: string, params: JsonObject | undefined, context: MessageContext] | undefined;
}

/** Which capability each server method needs. Methods not listed need none. */
const METHOD_CAPABILITY: Record<string, keyof ServerCapabilities> = {
  "tools/list": "tools",
  "tools/call": "tools",
  "prompts/list": "prompts",
  "prompts/get": "prompts",
  "resources/list": "resources",
  "resources/templates/list": "resources",
  "resources/read": "resources",
  "resources/subscribe": "resources",
  "resources/unsubscribe": "resources",
  "completion/complete": "completions",
  "logging/setLevel": "logging",
};

const LIST_METHOD: Record<ListKind, { method: string; key: string; cap: keyof ServerCapabilities }> = {
  tools: { method: "tools/list", key: "tools", cap: "tools" },
  prompts: { method: "prompts/list", key: "prompts", cap: "prompts" },
  resources: { method: "resources/list", key: "resources", cap: "resources" },
};

/** Largest number of pages followed for one listing: a server that loops its cursor cannot hang us. */
const MAX_PAGES = 1000;

/**
 * One MCP session with one upstream server, over any transport: the handshake, typed calls for the
 * whole server surface, answers to server pings, and current tool/prompt/resource lists.
 *
 * Lists are re-read on `notifications/<kind>/list_changed`, coalesced and rate-limited per kind: one
 * re-read runs, at most one more is queued behind it (every list_changed that arrives meanwhile joins
 * it), and two re-reads start at least `listRefreshMinIntervalMs` apart. A server that sends list_changed
 * after every response (supergateway's stateless mode does) therefore costs one listing per interval,
 * never a loop. Each list_changed is relayed (`notification`) once the re-read that covers it is done,
 * one per re-read however many arrived.
 *
 * Events: `notification` (method, params, context) for every server notification except those it
 * consumes itself; `listChanged` (kind) after a list was re-read; `listUnsettled` (kind) when
 * list_changed asks for re-reads back to back ({@link UNSETTLED_AFTER} in a row), and `listSettled`
 * (kind) once a whole interval passed without one; `close` (CloseInfo).
 */
export class MCPClient extends EventEmitter {
  readonly transport: MCPTransport;
  private readonly opts: MCPClientOptions;
  private readonly log: Logger;
  private initResult: InitializeResult | undefined;
  private lists: { tools?: Tool[]; prompts?: Prompt[]; resources?: Resource[]; templates?: ResourceTemplate[] } = {};
  private readonly refreshes = new Map<ListKind, ListRefresh>();
  private readonly minRefreshIntervalMs: number;
  /** Set once the transport closed (or close() was called): no more re-reads start. */
  private ended = false;
  /** The layer above (the router) answers sampling, elicitation and roots requests. */
  requestHandler: UpstreamRequestHandler | undefined;

  constructor(transport: MCPTransport, options: MCPClientOptions = {}) {
    super();
    this.transport = transport;
    this.opts = options;
    this.log = options.logger ?? silentLogger;
    this.minRefreshIntervalMs = options.listRefreshMinIntervalMs ?? RUNTIME_DEFAULTS.listRefreshMinIntervalMs;
    transport.onNotification = (method, params, context) => this.handleNotification(method, params, context);
    transport.onRequest = (request, context) => this.handleServerRequest(request, context);
    transport.onClose = (info: CloseInfo) => {
      this.endRefreshes();
      this.emit("close", info);
    };
    transport.onError = (error) => this.log.debug({ err: error.message }, "transport error");
  }

  get initializeResult(): InitializeResult | undefined {
    return this.initResult;
  }
  get serverInfo(): Implementation | undefined {
    return this.initResult?.serverInfo;
  }
  get capabilities(): ServerCapabilities {
    return this.initResult?.capabilities ?? {};
  }
  get instructions(): string | undefined {
    return this.initResult?.instructions;
  }
  get protocolVersion(): string | undefined {
    return this.initResult?.protocolVersion;
  }
  get tools(): readonly Tool[] {
    return this.lists.tools ?? [];
  }
  get prompts(): readonly Prompt[] {
    return this.lists.prompts ?? [];
  }
  get resources(): readonly Resource[] {
    return this.lists.resources ?? [];
  }
  get resourceTemplates(): readonly ResourceTemplate[] {
    return this.lists.templates ?? [];
  }

  /**
   * Connects the transport and runs the handshake: `initialize` (offering the newest version), a check
   * that the server answered a version mcpd speaks, then `notifications/initialized`, then one listing
   * of everything the server offers (list_changed sent before anyone listened is not lost). It waits for
   * one listing of each kind only: re-reads asked for by list_changed meanwhile go on in the background.
   * @throws ProtocolError (MCPD_PROTOCOL_VIOLATION) for an unsupported version or a malformed result.
   */
  async connect(): Promise<InitializeResult> {
    await this.transport.connect();
    const result = await this.transport.request<InitializeResult>(
      "initialize",
      {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: (this.opts.capabilities ?? {}) as JsonObject,
        clientInfo: (this.opts.clientInfo ?? { name: "mcpd", version: "0.1.0" }) as JsonObject,
      },
      this.opts.initializeTimeoutMs === undefined ? {} : { timeout: this.opts.initializeTimeoutMs },
    );
    if (!result || typeof result !== "object" || typeof result.protocolVersion !== "string") {
      await this.transport.close();
      throw new ProtocolError("Server answered initialize without a protocolVersion");
    }
    if (!(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(result.protocolVersion)) {
      await this.transport.close();
      throw new ProtocolError(
        `Server answered unsupported protocol version "${result.protocolVersion}" (mcpd speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
      );
    }
    this.initResult = {
      ...result,
      capabilities: result.capabilities ?? {},
      serverInfo: result.serverInfo ?? { name: "unknown", version: "0" },
    };
    await this.transport.notify("notifications/initialized");
    await Promise.all((["tools", "prompts", "resources"] as const).map((k) => this.listOnce(k)));
    return this.initResult;
  }

  /** Re-reads every list the server's capabilities offer. Errors are logged, never thrown. */
  async refreshAll(): Promise<void> {
    await Promise.all((["tools", "prompts", "resources"] as const).map((k) => this.refresh(k)));
  }

  /** The first listing of a kind: one already running (a list_changed came first) or done counts. */
  private listOnce(kind: ListKind): Promise<void> {
    const r = this.refreshOf(kind);
    if (r.running) return r.running;
    if (r.lastEndAt > 0) return Promise.resolve();
    return this.refresh(kind);
  }

  private refreshOf(kind: ListKind): ListRefresh {
    let r = this.refreshes.get(kind);
    if (r === undefined) {
      r = {
        running: undefined,
        queued: undefined,
        timer: undefined,
        wake: undefined,
        settleTimer: undefined,
        lastStartAt: 0,
        lastEndAt: 0,
        backToBack: 0,
        unsettled: false,
        notice: undefined,
      };
      this.refreshes.set(kind, r);
    }
    return r;
  }

  /**
   * Re-reads one list. Coalesced: while one re-read runs, every call shares the one queued behind it;
   * rate-limited: a re-read starts at least `listRefreshMinIntervalMs` after the previous one started.
   * Resolves once the re-read that covers this call is done (or the session ended). Never rejects.
   */
  refresh(kind: ListKind): Promise<void> {
    const r = this.refreshOf(kind);
    if (this.ended) return Promise.resolve();
    if (r.queued) return r.queued;
    if (!r.running && Date.now() - r.lastStartAt >= this.minRefreshIntervalMs) return this.startRefresh(kind, r);
    const queued = (async () => {
      // Yield first, so `r.queued` is set below before this body can clear it.
      await undefined;
      if (r.running) await r.running;
      const delay = r.lastStartAt + this.minRefreshIntervalMs - Date.now();
      if (delay > 0 && !this.ended) {
        await new Promise<void>((resolve) => {
          r.wake = resolve;
          r.timer = setTimeout(resolve, delay);
          r.timer.unref();
        });
      }
      r.timer = undefined;
      r.wake = undefined;
      r.queued = undefined;
      if (!this.ended) await this.startRefresh(kind, r);
    })();
    r.queued = queued;
    return queued;
  }

  private startRefresh(kind: ListKind, r: ListRefresh): Promise<void> {
    r.lastStartAt = Date.now();
    // This re-read covers every list_changed received so far; later ones wait for the next.
    const notice = r.notice;
    r.notice = undefined;
    const run = this.readList(kind).finally(() => {
      r.running = undefined;
      r.lastEndAt = Date.now();
      if (notice) this.emit("notification", ...notice);
      clearTimeout(r.settleTimer);
      r.settleTimer = undefined;
      if (r.unsettled && !r.queued && !this.ended) {
        r.settleTimer = setTimeout(() => {
          r.settleTimer = undefined;
          if (r.running || r.queued || !r.unsettled) return;
          r.unsettled = false;
          r.backToBack = 0;
          this.emit("listSettled", kind);
        }, this.minRefreshIntervalMs);
        r.settleTimer.unref();
      }
    });
    r.running = run;
    return run;
  }

  /** The session ended: queued re-reads give up instead of asking a closed transport. */
  private endRefreshes(): void {
    this.ended = true;
    for (const r of this.refreshes.values()) {
      clearTimeout(r.timer);
      clearTimeout(r.settleTimer);
      r.settleTimer = undefined;
      r.wake?.();
    }
  }

  private async readList(kind: ListKind): Promise<void> {
    const spec = LIST_METHOD[kind];
    if (!this.capabilities[spec.cap]) return;
    try {
      if (kind === "tools") this.lists.tools = await this.listAll<Tool>("tools/list", "tools");
      else if (kind === "prompts") this.lists.prompts = await this.listAll<Prompt>("prompts/list", "prompts");
      else {
        this.lists.resources = await this.listAll<Resource>("resources/list", "resources");
        try {
          this.lists.templates = await this.listAll<ResourceTemplate>("resources/templates/list", "resourceTemplates");
        } catch (err) {
          // Templates are optional: servers without them answer -32601.
          this.lists.templates = [];
          this.log.debug({ err: (err as Error).message }, "resources/templates/list failed");
        }
      }
      this.emit("listChanged", kind);
    } catch (err) {
      this.log.warn({ err: (err as Error).message, kind }, "listing failed");
    }
  }

  /** Follows `nextCursor` to the end and returns every item. */
  async listAll<T>(method: string, key: string, params: JsonObject = {}, options?: RequestOptions): Promise<T[]> {
    const out: T[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await this.request<JsonObject>(method, cursor === undefined ? params : { ...params, cursor }, options);
      const items = res[key];
      if (Array.isArray(items)) out.push(...(items as T[]));
      cursor = typeof res.nextCursor === "string" && res.nextCursor.length > 0 ? res.nextCursor : undefined;
      if (cursor === undefined) return out;
    }
    throw new ProtocolError(`${method} returned more than ${MAX_PAGES} pages`);
  }

  /**
   * Sends any request upstream. A method whose capability the server did not declare fails fast.
   * @throws CapabilityError (MCPD_CAPABILITY_NOT_SUPPORTED), and whatever the transport throws.
   */
  request<T = JsonObject>(method: string, params?: JsonObject, options?: RequestOptions): Promise<T> {
    const cap = METHOD_CAPABILITY[method];
    if (cap !== undefined && this.initResult && !this.capabilities[cap]) {
      return Promise.reject(
        new CapabilityError(`Server "${this.serverInfo?.name ?? "?"}" does not support ${method} (no "${String(cap)}" capability)`),
      );
    }
    return this.transport.request<T>(method, params, options);
  }

  listTools(options?: RequestOptions): Promise<Tool[]> {
    return this.listAll<Tool>("tools/list", "tools", {}, options);
  }
  callTool(name: string, args: JsonObject = {}, options?: RequestOptions): Promise<JsonObject> {
    return this.request("tools/call", { name, arguments: args }, options);
  }
  listPrompts(options?: RequestOptions): Promise<Prompt[]> {
    return this.listAll<Prompt>("prompts/list", "prompts", {}, options);
  }
  getPrompt(name: string, args: Record<string, string> = {}, options?: RequestOptions): Promise<JsonObject> {
    return this.request("prompts/get", { name, arguments: args }, options);
  }
  listResources(options?: RequestOptions): Promise<Resource[]> {
    return this.listAll<Resource>("resources/list", "resources", {}, options);
  }
  listResourceTemplates(options?: RequestOptions): Promise<ResourceTemplate[]> {
    return this.listAll<ResourceTemplate>("resources/templates/list", "resourceTemplates", {}, options);
  }
  readResource(uri: string, options?: RequestOptions): Promise<JsonObject> {
    return this.request("resources/read", { uri }, options);
  }
  subscribe(uri: string, options?: RequestOptions): Promise<JsonObject> {
    return this.request("resources/subscribe", { uri }, options);
  }
  unsubscribe(uri: string, options?: RequestOptions): Promise<JsonObject> {
    return this.request("resources/unsubscribe", { uri }, options);
  }
  complete(params: JsonObject, options?: RequestOptions): Promise<JsonObject> {
    return this.request("completion/complete", params, options);
  }
  setLoggingLevel(level: string, options?: RequestOptions): Promise<JsonObject> {
    return this.request("logging/setLevel", { level }, options);
  }
  ping(options?: RequestOptions): Promise<JsonObject> {
    return this.transport.request("ping", {}, options);
  }

  close(): Promise<void> {
    this.endRefreshes();
    return this.transport.close();
  }

  private handleNotification(method: string, params: JsonObject | undefined, context: MessageContext): void {
    switch (method) {
      case "notifications/tools/list_changed":
        return this.listChanged("tools", method, params, context);
      case "notifications/prompts/list_changed":
        return this.listChanged("prompts", method, params, context);
      case "notifications/resources/list_changed":
        return this.listChanged("resources", method, params, context);
      default:
        this.emit("notification", method, params, context);
    }
  }

  private listChanged(kind: ListKind, method: string, params: JsonObject | undefined, context: MessageContext): void {
    const r = this.refreshOf(kind);
    r.notice = [method, params, context];
    // Before the handshake is done the capabilities are unknown: connect()'s first listing covers it.
    if (this.initResult === undefined || this.ended) return;
    // Only a list_changed that queues a new re-read counts (a burst joining one queued re-read is one).
    if (!r.queued) this.countBackToBack(kind, r);
    void this.refresh(kind);
  }

  /**
   * A list_changed asked for a re-read: back to back when one is running or ended less than an interval
   * ago, else after a quiet spell. {@link UNSETTLED_AFTER} back to back mark the list unsettled.
   */
  private countBackToBack(kind: ListKind, r: ListRefresh): void {
    clearTimeout(r.settleTimer);
    r.settleTimer = undefined;
    if (!r.running && Date.now() - r.lastEndAt >= this.minRefreshIntervalMs) {
      r.backToBack = 0;
      return;
    }
    if (++r.backToBack >= UNSETTLED_AFTER && !r.unsettled) {
      r.unsettled = true;
      this.log.warn(
        { kind, minIntervalMs: this.minRefreshIntervalMs },
        `the server keeps sending ${kind}/list_changed: re-reading the list at most once per interval`,
      );
      this.emit("listUnsettled", kind);
    }
  }

  private async handleServerRequest(request: JsonRpcRequest, context: MessageContext): Promise<JsonObject> {
    if (request.method === "ping") return {};
    if (this.requestHandler) return this.requestHandler(request, context);
    throw new McpRemoteError({ code: WireCode.MethodNotFound, message: `Method not found: ${request.method}` });
  }
}
