import {
  keepMadeText,
  resultTextOf,
  withMembersFirst,
  LOG_LEVELS,
  META,
  MODERN_PROTOCOL_VERSIONS,
  WireCode,
  isObject,
  mcpMethod,
  readEnvelope,
  targetOf,
  toModernError,
  toWireError,
  withoutEnvelope,
  type JsonObject,
  type JsonRpcRequest,
  type LogLevel,
  type RequestCaller,
  type RequestId,
} from "@mcpd/protocol";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { VERSION } from "../version.js";
import { boundedClientInfo } from "./handshake.js";
import { ListenStreams, type ListenHost } from "./listen-streams.js";
import type { HoldingConnection } from "./held-calls.js";
import type { SessionContext } from "./ports.js";
import type { View } from "./view-selection.js";

/** What a connection's 2026-era requests need from it (its Session). */
export interface ModernHost extends ListenHost, HoldingConnection {
  readonly view: View;
  /** The client's name and version for status and logs: a 2026 client's from its first request's envelope. */
  clientInfo: JsonObject | undefined;
  /** Sets the servers it views to the most verbose log level asked for (a request's `logLevel` came or went). */
  relevelViewed(): void;
}

/** mcpd's serverInfo in the aggregate view's results (one object: results are encoded, never changed in place). */
const MCPD_INFO: JsonObject = Object.freeze({ name: "mcpd", version: VERSION }) as JsonObject;

/** A 2026-era request being answered: its method (what its result gets) and the log level it asked for. */
interface ModernCall {
  readonly method: string;
  readonly logLevel: LogLevel | undefined;
  /** The capabilities its envelope declared. */
  readonly capabilities: JsonObject;
  /** What it names (a tool's or prompt's name, a resource's URI), as the client named it. */
  readonly target: string | undefined;
}

/**
 * A connection's 2026-era requests (those whose `_meta` names a 2026 protocol version): no handshake, the
 * envelope read and checked on every request (-32022, -32602), removed methods refused (-32601),
 * `server/discover` and `subscriptions/listen` served here, anything else routed as on an initialized
 * connection with the envelope taken out of `_meta` (`traceparent`, `progressToken` and the rest stay).
 * Every answer to such a request passes {@link adapt}: a result gets `resultType`, cache hints and the
 * view's serverInfo, an error a code the 2026 era allows. A result that already has a `resultType` keeps it
 * (`input_required`, once servers answer so, goes to the client as it is).
 */
export class ModernCalls {
  private readonly calls = new Map<RequestId, ModernCall>();
  private listenStreams: ListenStreams | undefined;
  /** Calls in flight that asked for log messages. */
  private levelled = 0;

  constructor(
    private readonly host: ModernHost,
    private readonly ctx: Pick<SessionContext, "servers" | "held">,
  ) {}

  private get listens(): ListenStreams {
    return (this.listenStreams ??= new ListenStreams(this.host));
  }

  /** The most verbose log level its calls in flight asked for; undefined: none asked (no log messages). */
  get logLevel(): LogLevel | undefined {
    if (this.levelled === 0) return undefined;
    let best: number = LOG_LEVELS.length - 1;
    for (const c of this.calls.values()) if (c.logLevel !== undefined) best = Math.min(best, LOG_LEVELS.indexOf(c.logLevel));
    return LOG_LEVELS[best] as LogLevel;
  }

  /** Whether `id` is one of its calls in flight. */
  has(id: RequestId): boolean {
    return this.calls.has(id);
  }

  /** Who its call `id` is relayed for: the capabilities, info and log level of that request's own envelope. */
  callerOf(id: RequestId): RequestCaller | undefined {
    const call = this.calls.get(id);
    if (call === undefined) return undefined;
    return { clientCapabilities: call.capabilities, clientInfo: this.host.clientInfo, logLevel: call.logLevel };
  }

  /** Its call `id` as the client sent it: the method and what it names (a requestState is sealed to them). */
  requestOf(id: RequestId): { method: string; target: string | undefined } | undefined {
    const call = this.calls.get(id);
    return call === undefined ? undefined : { method: call.method, target: call.target };
  }

  /** Whether its call `id` declared that client capability in its envelope. */
  declared(id: RequestId, capability: string): boolean {
    return isObject(this.calls.get(id)?.capabilities[capability]);
  }

  /** Whether it has a listen open (its connection then takes list changes). */
  get listening(): boolean {
    return (this.listenStreams?.size ?? 0) > 0;
  }

  /** Serves one request that claims a protocol version in its `_meta`. */
  serve(req: JsonRpcRequest): void {
    const { id, method } = req;
    const envelope = readEnvelope(req.params);
    if ("error" in envelope) return this.host.replyError(id, envelope.error);
    const info = mcpMethod(method);
    if (info !== undefined && (info.kind !== "request" || info.from !== "client" || !info.eras.includes("2026")))
      return this.host.replyError(id, {
        code: WireCode.MethodNotFound,
        message: `Method not found: ${method} (not in MCP ${envelope.protocolVersion})`,
      });
    if (this.calls.has(id) || this.listenStreams?.has(id))
      return this.host.replyError(id, {
        code: WireCode.InvalidRequest,
        message: `Request id ${JSON.stringify(id)} is already in flight on this connection`,
      });
    if (envelope.clientInfo !== undefined && this.host.clientInfo === undefined)
      this.host.clientInfo = boundedClientInfo(envelope.clientInfo);
    const params = withoutEnvelope(req.params);
    if (method === "subscriptions/listen") return this.listens.open(id, params);
    this.calls.set(id, {
      method,
      logLevel: envelope.logLevel,
      capabilities: envelope.clientCapabilities,
      target: targetOf(method, params)?.name,
    });
    if (envelope.logLevel !== undefined) {
      this.levelled++;
      this.host.relevelViewed();
    }
    if (method === "server/discover") return this.discover(id);
    // A retry with the requestState mcpd issued for a 2025 server's request (held-calls.ts).
    if (this.ctx.held.claim(this.host, id, method, params)) return;
    this.host.route(id, method, params);
  }

  private discover(id: RequestId): void {
    this.host.viewInit().then(
      (init) => {
        const caps = isObject(init.capabilities) ? { ...init.capabilities } : {};
        // Not in the 2026 era's server capabilities (tasks is an extension now).
        delete caps.tasks;
        const result: JsonObject = { supportedVersions: [...MODERN_PROTOCOL_VERSIONS], capabilities: caps };
        if (typeof init.instructions === "string") result.instructions = init.instructions;
        this.host.send({ jsonrpc: "2.0", id, result });
      },
      (err: unknown) => this.host.replyError(id, toWireError(err)),
    );
  }

  /**
   * An outgoing message as the client must get it: an answer to one of its 2026-era calls adapted, the
   * answer to one of mcpd's own requests for a listen swallowed (undefined), anything else as it is.
   */
  adapt(message: object): object | undefined {
    const m = message as { id?: RequestId; method?: unknown; result?: JsonObject; error?: JsonObject };
    if (m.method !== undefined || m.id === undefined) return message;
    if (this.listenStreams?.swallows(m.id, m.error !== undefined)) return undefined;
    const call = this.calls.get(m.id);
    if (call === undefined) return message;
    this.forget(m.id, call);
    if (m.error !== undefined) return { jsonrpc: "2.0", id: m.id, error: toModernError(m.error as never) };
    return { jsonrpc: "2.0", id: m.id, result: this.result(call.method, m.result ?? {}) };
  }

  private forget(id: RequestId, call: ModernCall): void {
    this.calls.delete(id);
    if (call.logLevel === undefined) return;
    this.levelled--;
    this.host.relevelViewed();
  }

  /**
   * A result for a 2026-era client: `resultType`, cache hints on what the era caches, the view's serverInfo
   * in `_meta`. When the server's text of the result is at hand and lacks all of them (the common case),
   * they are written before that text, so relaying it costs a scan, not a `JSON.stringify` of the result.
   */
  private result(method: string, result: JsonObject): JsonObject {
    const added: JsonObject = {};
    // Whether the server's text can go on with the added members written first: none of them is in it.
    let fresh = !("_meta" in result);
    if (result.resultType === undefined) {
      added.resultType = "complete";
      fresh &&= !("resultType" in result);
    }
    if (mcpMethod(method)?.cacheable === true) {
      if (typeof result.ttlMs !== "number" || result.ttlMs < 0) {
        added.ttlMs = RUNTIME_DEFAULTS.modernTtlMs;
        fresh &&= !("ttlMs" in result);
      }
      if (result.cacheScope !== "public" && result.cacheScope !== "private") {
        added.cacheScope = RUNTIME_DEFAULTS.modernCacheScope;
        fresh &&= !("cacheScope" in result);
      }
    }
    const info = this.serverInfo();
    added._meta = isObject(result._meta) ? { ...result._meta, [META.serverInfo]: info } : { [META.serverInfo]: info };
    const out: JsonObject = { ...result, ...added };
    const text = fresh ? resultTextOf(result) : undefined;
    const made = text !== undefined ? withMembersFirst(text, added) : undefined;
    if (made !== undefined) keepMadeText(out, made);
    return out;
  }

  /** mcpd in the aggregate view; in a server's view, the server as mcpd knows it. */
  private serverInfo(): JsonObject {
    const view = this.host.view;
    if (view.kind === "aggregate") return MCPD_INFO;
    const info = this.ctx.servers.get(view.server)?.client?.initializeResult?.serverInfo;
    return isObject(info) ? info : { name: view.server, version: "0" };
  }

  /** The client cancelled `id`: a listen ends; a call is forgotten (its answer never comes). */
  cancelled(id: RequestId): void {
    if (this.listenStreams?.end(id)) return;
    const call = this.calls.get(id);
    if (call) this.forget(id, call);
  }

  /** A server's notification, as the view shows it, to a connection that never initialized: listens and asked-for log messages only. */
  relay(method: string, params: JsonObject | undefined): void {
    if (method === "notifications/message") {
      if (this.logLevel !== undefined) this.host.send({ jsonrpc: "2.0", method, params: params ?? {} });
      return;
    }
    this.listenStreams?.deliver(method, params);
  }
}
