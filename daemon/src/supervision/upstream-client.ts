import { EventEmitter } from "node:events";
import {
  CapabilityError,
  LATEST_PROTOCOL_VERSION,
  McpRemoteError,
  ProtocolError,
  SUPPORTED_PROTOCOL_VERSIONS,
  WireCode,
  silentLogger,
  hasCapability,
  mcpMethod,
  type ClientCapabilities,
  type Implementation,
  type InitializeResult,
  type JsonObject,
  type JsonRpcRequest,
  type Logger,
  type Prompt,
  type RequestReply,
  type Resource,
  type ResourceTemplate,
  type ServerCapabilities,
  type Tool,
} from "@mcpd/protocol";
import type { CloseInfo, MCPTransport, MessageContext, TransportRequestOptions } from "@mcpd/transports";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { ListRefresher, type ListKind } from "./list-refresher.js";
import { UpstreamLists, listAll } from "./upstream-lists.js";

export type { ListKind };

/** Hands a server-to-client request to the layer above. Throw to answer with an error. */
export type UpstreamRequestHandler = (request: JsonRpcRequest, context: MessageContext) => Promise<JsonObject>;

export interface UpstreamClientOptions {
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

/**
 * One MCP session with one upstream server, over any transport: the handshake, typed calls for the
 * whole server surface, answers to server pings, and current tool/prompt/resource lists.
 *
 * Lists are re-read on `notifications/<kind>/list_changed`, coalesced and rate-limited per kind by a
 * {@link ListRefresher} (at most one listing per `listRefreshMinIntervalMs` however often the server
 * says its list changed). Each list_changed is relayed (`notification`) once the re-read that covers it
 * is done, one per re-read however many arrived.
 *
 * Events: `notification` (method, params, context) for every server notification except those it
 * consumes itself; `listChanged` (kind) after a list was re-read; `listUnsettled` (kind) when
 * list_changed asks for re-reads back to back (see ListRefresher), and `listSettled` (kind) once a whole
 * interval passed without one; `close` (CloseInfo).
 */
export class UpstreamClient extends EventEmitter {
  readonly transport: MCPTransport;
  private readonly opts: UpstreamClientOptions;
  private readonly log: Logger;
  private initResult: InitializeResult | undefined;
  private readonly lists: UpstreamLists;
  private readonly refresher: ListRefresher;
  /** The layer above (the router) answers sampling, elicitation and roots requests. */
  requestHandler: UpstreamRequestHandler | undefined;
  /**
   * How a re-read of a list waits for its turn (the server's concurrency limit, before the calls waiting);
   * unset: it is sent at once.
   */
  rereadsThrough: ((read: () => Promise<void>) => Promise<void>) | undefined;

  constructor(transport: MCPTransport, options: UpstreamClientOptions = {}) {
    super();
    this.transport = transport;
    this.opts = options;
    this.log = options.logger ?? silentLogger;
    this.lists = new UpstreamLists((method, params, opts) => this.request(method, params, opts), this.log);
    this.refresher = new ListRefresher({
      read: (kind) => this.readList(kind),
      minIntervalMs: options.listRefreshMinIntervalMs ?? RUNTIME_DEFAULTS.listRefreshMinIntervalMs,
      logger: this.log,
      onNotice: (notice) => this.emit("notification", ...notice),
      onUnsettled: (kind) => this.emit("listUnsettled", kind),
      onSettled: (kind) => this.emit("listSettled", kind),
    });
    transport.onNotification = (method, params, context) => this.handleNotification(method, params, context);
    transport.onRequest = (request, context) => this.handleServerRequest(request, context);
    transport.onClose = (info: CloseInfo) => {
      this.refresher.end();
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
    await Promise.all((["tools", "prompts", "resources"] as const).map((k) => this.refresher.listOnce(k)));
    return this.initResult;
  }

  /** Re-reads every list the server's capabilities offer. Errors are logged, never thrown. */
  async refreshAll(): Promise<void> {
    await Promise.all((["tools", "prompts", "resources"] as const).map((k) => this.refresh(k)));
  }

  /**
   * Re-reads one list. Coalesced: while one re-read runs, every call shares the one queued behind it;
   * rate-limited: a re-read starts at least `listRefreshMinIntervalMs` after the previous one started.
   * Resolves once the re-read that covers this call is done (or the session ended). Never rejects.
   */
  refresh(kind: ListKind): Promise<void> {
    return this.refresher.refresh(kind);
  }

  private readList(kind: ListKind): Promise<void> {
    const through = this.rereadsThrough;
    return through ? through(() => this.readListNow(kind)) : this.readListNow(kind);
  }

  private async readListNow(kind: ListKind): Promise<void> {
    try {
      if (await this.lists.read(kind, this.capabilities)) this.emit("listChanged", kind);
    } catch (err) {
      this.log.warn({ err: (err as Error).message, kind }, "listing failed");
    }
  }

  /** Follows `nextCursor` to the end and returns every item. */
  listAll<T>(method: string, key: string, params: JsonObject = {}, options?: TransportRequestOptions): Promise<T[]> {
    return listAll<T>((m, p, o) => this.request(m, p, o), method, key, params, options);
  }

  /**
   * Sends any request upstream. A method whose capability the server did not declare fails fast.
   * @throws CapabilityError (MCPD_CAPABILITY_NOT_SUPPORTED), and whatever the transport throws.
   */
  request<T = JsonObject>(method: string, params?: JsonObject, options?: TransportRequestOptions): Promise<T> {
    const refused = this.refusal(method);
    return refused ? Promise.reject(refused) : this.transport.request<T>(method, params, options);
  }

  /** {@link request} without a promise: `reply` learns the outcome (see MCPTransport.call). */
  call(method: string, params: JsonObject | undefined, options: TransportRequestOptions | undefined, reply: RequestReply): void {
    const refused = this.refusal(method);
    if (refused) return reply.reject(refused);
    const t = this.transport;
    if (t.call) t.call(method, params, options, reply);
    else
      t.request<JsonObject>(method, params, options).then(
        (result) => reply.resolve(result),
        (err: unknown) => reply.reject(err),
      );
  }

  /** Why `method` cannot be sent: the server did not declare its capability. Undefined: it can. */
  private refusal(method: string): CapabilityError | undefined {
    if (!this.initResult || hasCapability(method, "server", this.capabilities as JsonObject)) return undefined;
    const cap = mcpMethod(method)?.capability?.slice("server.".length);
    return new CapabilityError(`Server "${this.serverInfo?.name ?? "?"}" does not support ${method} (no "${cap}" capability)`);
  }

  listTools(options?: TransportRequestOptions): Promise<Tool[]> {
    return this.listAll<Tool>("tools/list", "tools", {}, options);
  }
  callTool(name: string, args: JsonObject = {}, options?: TransportRequestOptions): Promise<JsonObject> {
    return this.request("tools/call", { name, arguments: args }, options);
  }
  listPrompts(options?: TransportRequestOptions): Promise<Prompt[]> {
    return this.listAll<Prompt>("prompts/list", "prompts", {}, options);
  }
  getPrompt(name: string, args: Record<string, string> = {}, options?: TransportRequestOptions): Promise<JsonObject> {
    return this.request("prompts/get", { name, arguments: args }, options);
  }
  listResources(options?: TransportRequestOptions): Promise<Resource[]> {
    return this.listAll<Resource>("resources/list", "resources", {}, options);
  }
  listResourceTemplates(options?: TransportRequestOptions): Promise<ResourceTemplate[]> {
    return this.listAll<ResourceTemplate>("resources/templates/list", "resourceTemplates", {}, options);
  }
  readResource(uri: string, options?: TransportRequestOptions): Promise<JsonObject> {
    return this.request("resources/read", { uri }, options);
  }
  subscribe(uri: string, options?: TransportRequestOptions): Promise<JsonObject> {
    return this.request("resources/subscribe", { uri }, options);
  }
  unsubscribe(uri: string, options?: TransportRequestOptions): Promise<JsonObject> {
    return this.request("resources/unsubscribe", { uri }, options);
  }
  complete(params: JsonObject, options?: TransportRequestOptions): Promise<JsonObject> {
    return this.request("completion/complete", params, options);
  }
  setLoggingLevel(level: string, options?: TransportRequestOptions): Promise<JsonObject> {
    return this.request("logging/setLevel", { level }, options);
  }
  /** Sends the server a notification. */
  notify(method: string, params?: JsonObject): Promise<void> {
    return this.transport.notify(method, params);
  }
  ping(options?: TransportRequestOptions): Promise<JsonObject> {
    return this.transport.request("ping", {}, options);
  }

  close(): Promise<void> {
    this.refresher.end();
    return this.transport.close();
  }

  private handleNotification(method: string, params: JsonObject | undefined, context: MessageContext): void {
    switch (method) {
      case "notifications/tools/list_changed":
        return this.refresher.changed("tools", [method, params, context], this.initResult !== undefined);
      case "notifications/prompts/list_changed":
        return this.refresher.changed("prompts", [method, params, context], this.initResult !== undefined);
      case "notifications/resources/list_changed":
        return this.refresher.changed("resources", [method, params, context], this.initResult !== undefined);
      default:
        this.emit("notification", method, params, context);
    }
  }

  private async handleServerRequest(request: JsonRpcRequest, context: MessageContext): Promise<JsonObject> {
    if (request.method === "ping") return {};
    if (this.requestHandler) return this.requestHandler(request, context);
    throw new McpRemoteError({ code: WireCode.MethodNotFound, message: `Method not found: ${request.method}` });
  }
}
