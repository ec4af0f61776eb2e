/**
 * An in-memory MCP server behind the router's {@link Upstream} port: lists a test gives it, calls it
 * records, and behaviours the test scripts (answer at once, hold a call until told, fail, send progress,
 * ask the client something, change a list, crash). No process, no transport, no clock but the bound on
 * a wait for readiness: a call settles when the script or the test settles it, and a cancellation reaches
 * it by the id it gave the call (as the JSON-RPC peer does: the call rejects, and `notifications/cancelled`
 * is recorded as sent upstream).
 */
import {
  CapabilityError,
  ServerUnavailableError,
  TransportClosedError,
  Cancellation,
  type CancelById,
  type ClientCapabilities,
  type InitializeResult,
  type JsonObject,
  type MessageContext,
  type Prompt,
  type RequestId,
  type RequestReply,
  type Resource,
  type ResourceTemplate,
  type ServerCapabilities,
  type ServerState,
  type Tool,
} from "@mcpd/protocol";
import type { ResolvedServerConfig } from "../../src/config/config-schema.js";
import type {
  ListKind,
  RelayOptions,
  Upstream,
  UpstreamEvents,
  UpstreamRequestOptions,
  UpstreamSession,
} from "../../src/router/upstream-port.js";
import { defaultAnswer, METHOD_CAPABILITY } from "./fake-answers.js";
import { FakeCall } from "./fake-call.js";

export { FakeCall };

/** What a fake server offers; names alone stand for items with only a name (or a URI). */
export interface FakeServerSpec {
  tools?: Array<Tool | string>;
  prompts?: Array<Prompt | string>;
  resources?: Array<Resource | string>;
  resourceTemplates?: ResourceTemplate[];
  /** Default: every capability (tools, prompts, resources with subscribe, logging, completions). */
  capabilities?: ServerCapabilities;
  instructions?: string;
  /** The state it starts in; default `ready`. */
  state?: ServerState;
  /** Tools known from a previous run, listed while it is not ready. */
  cachedTools?: Array<Tool | string>;
}

/** A script for a method (or `tools/call:<tool>`): it settles the call now, later, or never. */
export type FakeScript = (call: FakeCall) => void;

const ALL_CAPABILITIES: ServerCapabilities = {
  tools: { listChanged: true },
  prompts: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  logging: {},
  completions: {},
};

const named = <T>(items: Array<T | string> | undefined, key: "name" | "uri"): T[] =>
  (items ?? []).map((i) => (typeof i === "string" ? ({ [key]: i } as T) : i));

/**
 * A fake server: an {@link Upstream} and, while ready, its own {@link UpstreamSession}. What it says goes
 * to the directory's listener (`events`, set by FakeDirectory).
 */
export class FakeUpstream implements Upstream, UpstreamSession, CancelById {
  readonly name: string;
  config: ResolvedServerConfig;
  state: ServerState;
  failsAtOnce = false;
  cachedTools: Tool[] | undefined;
  capabilities: ServerCapabilities;
  instructions: string | undefined;
  prompts: Prompt[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
  /** Every call it received, in order. */
  readonly calls: FakeCall[] = [];
  /** The calls not settled yet. */
  readonly pending = new Set<FakeCall>();
  /** Notifications the router sent it (`notifications/cancelled` by upstream id, `roots/list_changed`). */
  readonly received: Array<{ method: string; params: JsonObject | undefined }> = [];
  /** Where what it says goes: the router's callbacks. */
  events: UpstreamEvents | undefined;
  /** A private (per-client) session's: what its client declared, as the directory was given it. */
  clientCapabilities: ClientCapabilities | undefined;
  private liveTools: Tool[];
  private readonly scripts = new Map<string, FakeScript>();
  private readonly waiting = new Set<{ resolve: () => void; reject: (e: unknown) => void }>();
  private nextId = 0;

  constructor(config: ResolvedServerConfig, spec: FakeServerSpec = {}) {
    this.name = config.name;
    this.config = config;
    this.state = spec.state ?? (config.enabled ? "ready" : "disabled");
    this.liveTools = named<Tool>(spec.tools, "name");
    this.prompts = named<Prompt>(spec.prompts, "name");
    this.resources = named<Resource>(spec.resources, "uri");
    this.resourceTemplates = spec.resourceTemplates ?? [];
    this.capabilities = spec.capabilities ?? ALL_CAPABILITIES;
    this.instructions = spec.instructions;
    this.cachedTools = spec.cachedTools && named<Tool>(spec.cachedTools, "name");
  }

  get tools(): readonly Tool[] {
    return this.state === "ready" ? this.liveTools : (this.cachedTools ?? []);
  }

  get client(): UpstreamSession | undefined {
    return this.state === "ready" ? this : undefined;
  }

  get initializeResult(): InitializeResult {
    const result: InitializeResult = {
      protocolVersion: "2025-06-18",
      capabilities: this.capabilities,
      serverInfo: { name: this.name, version: "1" },
    };
    if (this.instructions !== undefined) result.instructions = this.instructions;
    return result;
  }

  /** Scripts a method (`tools/call`), or one tool's calls (`tools/call:<name>`); it replaces the default answer. */
  on(target: string, script: FakeScript): this {
    this.scripts.set(target, script);
    return this;
  }

  /** Holds every call of `target` (a method or `tools/call:<name>`) until the test settles it. */
  hold(target: string): this {
    return this.on(target, () => {});
  }

  /** The calls received of a method (and tool), in order. */
  callsOf(method: string, tool?: string): FakeCall[] {
    return this.calls.filter((c) => c.method === method && (tool === undefined || c.params?.name === tool));
  }

  whenReady(timeoutMs: number): Promise<UpstreamSession> {
    if (this.state === "ready") return Promise.resolve(this);
    if (this.failsAtOnce || ["failed", "disabled", "needs-auth"].includes(this.state))
      return Promise.reject(new ServerUnavailableError(this.name, this.state));
    return new Promise((resolve, reject) => {
      const w = { resolve: () => resolve(this), reject };
      this.waiting.add(w);
      // A bound, as the real readiness has: a test that never makes it ready gets an error, not a hang.
      setTimeout(
        () => this.waiting.delete(w) && reject(new ServerUnavailableError(this.name, this.state, `not ready after ${timeoutMs} ms`)),
        timeoutMs,
      ).unref();
    });
  }

  request<T = JsonObject>(method: string, params: JsonObject | undefined, options: UpstreamRequestOptions): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const reply = { resolve: (r: JsonObject) => resolve(r as T), reject };
      this.relay(
        method,
        params,
        { timeout: options.timeout ?? 0, waitMs: options.waitMs, cancellation: options.cancellation ?? new Cancellation() },
        reply,
      );
    });
  }

  relay(method: string, params: JsonObject | undefined, options: RelayOptions, reply: RequestReply<JsonObject>): void {
    if (this.state !== "ready") {
      this.whenReady(options.waitMs).then(
        () => this.relay(method, params, options, reply),
        (err: unknown) => reply.reject(err),
      );
      return;
    }
    const cap = METHOD_CAPABILITY[method];
    if (cap !== undefined && !this.capabilities[cap])
      return reply.reject(new CapabilityError(`Server "${this.name}" does not support ${method}`));
    if (options.cancellation.cancelled) return reply.reject(options.cancellation.reason);
    const call = new FakeCall(this, ++this.nextId, method, params, reply);
    options.onRequestId?.(call.id);
    options.cancellation.attach(this, call.id);
    this.calls.push(call);
    this.pending.add(call);
    const tool = method === "tools/call" ? this.scripts.get(`tools/call:${String(params?.name)}`) : undefined;
    const script = tool ?? this.scripts.get(method);
    if (script) script(call);
    else defaultAnswer(this, call);
  }

  /** The router gave a call up (CancelById): it rejects, and the server is told with the id it knows. */
  cancel(id: RequestId, reason: unknown): boolean {
    const call = [...this.pending].find((c) => c.id === id);
    if (!call) return false;
    call.cancelled = reason;
    call.fail(reason instanceof Error ? reason : new Error(String(reason)));
    this.received.push({ method: "notifications/cancelled", params: { requestId: id } });
    return true;
  }

  // ---- UpstreamSession: what the router sends the live session ----

  async notify(method: string, params?: JsonObject): Promise<void> {
    this.received.push({ method, params });
  }

  setLoggingLevel(level: string): Promise<JsonObject> {
    return this.request("logging/setLevel", { level }, { waitMs: 0 });
  }

  // ---- what the server says ----

  sendNotification(method: string, params?: JsonObject, context: MessageContext = {}): void {
    this.events?.notification(this, method, params, context);
  }

  /** A server-to-client request (`context.relatedRequestId`: the call whose reply stream it came on). */
  sendRequest(method: string, params?: JsonObject, context: MessageContext = {}, id: RequestId = `s${++this.nextId}`): Promise<JsonObject> {
    if (!this.events) return Promise.reject(new Error("no listener"));
    return this.events.request(this, { jsonrpc: "2.0", id, method, ...(params ? { params } : {}) }, context);
  }

  /** Changes a list: it is re-read (listChanged), then the server's list_changed notification follows. */
  setList(kind: ListKind, items: Array<Tool | Prompt | Resource | string>): void {
    if (kind === "tools") this.liveTools = named<Tool>(items as Array<Tool | string>, "name");
    else if (kind === "prompts") this.prompts = named<Prompt>(items as Array<Prompt | string>, "name");
    else this.resources = named<Resource>(items as Array<Resource | string>, "uri");
    this.events?.listChanged(this, kind);
    this.sendNotification(`notifications/${kind}/list_changed`, {});
  }

  /** Moves to `state`, telling the router; waiters are released when it is ready, failed when it cannot be. */
  setState(state: ServerState, reason: string = state): void {
    const previous = this.state;
    this.state = state;
    this.events?.state(this, { server: this.name, state, previous, reason });
    for (const w of [...this.waiting]) {
      if (state === "ready") w.resolve();
      else if (state === "failed" || state === "disabled" || state === "stopped" || state === "needs-auth")
        w.reject(new ServerUnavailableError(this.name, state, reason));
      else continue;
      this.waiting.delete(w);
    }
  }

  /** The process died: every call in flight fails with `Transport closed`, and it is `restarting`. */
  crash(reason = "process exited"): void {
    for (const call of [...this.pending]) call.fail(new TransportClosedError(reason));
    this.setState("restarting", `session closed: ${reason}`);
  }
}
