import { EventEmitter } from "node:events";
import {
  CapabilityError,
  McpRemoteError,
  WireCode,
  silentLogger,
  hasCapability,
  mcpMethod,
  type ClientCapabilities,
  type Era,
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
import { openSession, type EraChoice } from "./era-handshake.js";
import { ListRefresher, type ListKind } from "./list-refresher.js";
import { ModernUpstream, unstamped, type UpstreamRequestOptions } from "./modern-upstream.js";
import type { RejectedTool, ToolHeaders } from "./tool-headers.js";
import { UpstreamLists, listAll } from "./upstream-lists.js";

export type { ListKind, UpstreamRequestOptions };

/** What mcpd calls itself towards a server unless told otherwise. */
const MCPD_INFO = { name: "mcpd", version: "0.1.0" };

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
  /** Whether the handshake is under way: a close meanwhile is the start's failure, not a crash of a session. */
  handshaking = false;
  /** Set when the session is in the 2026 era. */
  private modern: ModernUpstream | undefined;
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
      this.modern?.end();
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
  /** The tools left out of {@link tools} because their `x-mcp-header` annotations are invalid (2026 servers over HTTP). */
  get rejectedTools(): readonly RejectedTool[] {
    return this.modern?.headers?.rejected ?? [];
  }

  /** The era of the session, once connected. */
  get era(): Era | undefined {
    return this.initResult === undefined ? undefined : this.modern ? "2026" : "2025";
  }

  /**
   * Connects the transport and opens the session in `choice`'s era (see era-handshake.ts): the 2025
   * handshake (`initialize`, offering the newest version, checked, then `notifications/initialized`), or
   * the 2026 `server/discover` (then the `subscriptions/listen` stream); with no era given, a probe decides.
   * An era not forced falls over to the other when the server's answer proves it. Then one listing of
   * everything the server offers (list_changed sent before anyone listened is not lost): it waits for one
   * listing of each kind only; re-reads asked for by list_changed meanwhile go on in the background.
   * @throws ProtocolError (MCPD_PROTOCOL_VIOLATION) for an unsupported version or a malformed result;
   *   EraMismatchError when the server refuses the forced era; ProbeClosedError when it closed during a probe.
   */
  async connect(choice: EraChoice = { era: "2025", forced: true }): Promise<InitializeResult> {
    await this.transport.connect();
    this.handshaking = true;
    try {
      this.initResult = await this.handshake(choice);
    } catch (err) {
      await this.transport.close();
      throw err;
    } finally {
      this.handshaking = false;
    }
    if (this.modern) this.modern.listen.start(this.capabilities);
    else await this.transport.notify("notifications/initialized");
    await Promise.all((["tools", "prompts", "resources"] as const).map((k) => this.refresher.listOnce(k)));
    return this.initResult;
  }

  private async handshake(choice: EraChoice): Promise<InitializeResult> {
    const own = {
      clientCapabilities: (this.opts.capabilities ?? {}) as JsonObject,
      clientInfo: (this.opts.clientInfo ?? MCPD_INFO) as JsonObject,
    };
    const { result, era } = await openSession(this.transport, own, choice, this.opts.initializeTimeoutMs);
    if (era !== "2026") return result;
    const modern = (this.modern = new ModernUpstream(this.transport, result.protocolVersion, own, this.log, () => void this.refreshAll()));
    if (modern.headers) this.lists.screen = (tools) => (modern.headers as ToolHeaders).screen(tools);
    return result;
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
  request<T = JsonObject>(method: string, params?: JsonObject, options?: UpstreamRequestOptions): Promise<T> {
    if (this.modern === undefined && this.refusal(method) === undefined) return this.transport.request<T>(method, params, options);
    return new Promise<T>((resolve, reject) => this.call(method, params, options, { resolve: (r) => resolve(r as T), reject }));
  }

  /** {@link request} without a promise: `reply` learns the outcome (see MCPTransport.call). */
  call(method: string, params: JsonObject | undefined, options: UpstreamRequestOptions | undefined, reply: RequestReply): void {
    const refused = this.refusal(method);
    if (refused) return reply.reject(refused);
    const m = this.modern;
    const answer = m?.answer(method, params);
    if (answer instanceof Promise) return void answer.then(reply.resolve.bind(reply), reply.reject.bind(reply));
    if (answer !== undefined) return answer instanceof Error ? reply.reject(answer) : reply.resolve(answer);
    if (m) return m.send(method, params, options, reply, () => this.refresh("tools"));
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

  callTool(name: string, args: JsonObject = {}, options?: TransportRequestOptions): Promise<JsonObject> {
    return this.request("tools/call", { name, arguments: args }, options);
  }
  listPrompts(options?: TransportRequestOptions): Promise<Prompt[]> {
    return this.listAll<Prompt>("prompts/list", "prompts", {}, options);
  }
  setLoggingLevel(level: string, options?: TransportRequestOptions): Promise<JsonObject> {
    return this.request("logging/setLevel", { level }, options);
  }
  /** Sends the server a notification. */
  notify(method: string, params?: JsonObject): Promise<void> {
    return this.transport.notify(method, params);
  }
  /** A health check: `ping`, or `server/discover` for a 2026 server (which has no ping). */
  ping(options?: TransportRequestOptions): Promise<JsonObject> {
    return this.modern ? this.modern.ping(options) : this.transport.request("ping", {}, options);
  }

  close(): Promise<void> {
    this.refresher.end();
    this.modern?.end();
    return this.transport.close();
  }

  private handleNotification(method: string, received: JsonObject | undefined, on: MessageContext): void {
    if (this.modern?.listen.consumes(method, received, on)) return;
    // A list change or resource update on a 2026 listen stream concerns the clients that see the server
    // (or subscribed to the resource), not the request the stream is (mcpd's own).
    const listen = this.modern !== undefined && mcpMethod(method)?.listenFilter !== undefined;
    const [params, context] = listen ? [unstamped(received), {}] : [received, on];
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
