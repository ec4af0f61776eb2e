import {
  AuthRequiredError,
  QueueFullError,
  type Cancellation,
  type JsonObject,
  type RequestId,
  type RequestReply,
  type ServerState,
} from "@mcpd/protocol";
import type { TransportRequestOptions } from "@mcpd/transports";
import { ConcurrencyGate } from "./concurrency-gate.js";
import { clarifyRequestError } from "./request-error.js";
import type { ServerStats } from "./server-stats.js";
import type { UpstreamClient } from "./upstream-client.js";

/** What {@link ServerCalls} needs of the server it sends calls to (its ServerHandle). */
export interface CallsHost {
  readonly name: string;
  readonly state: ServerState;
  readonly stateReason: string;
  readonly config: { readonly maxQueue: number };
  readonly stats: ServerStats;
  /** The session when it can take a request now. */
  readonly usableClient: UpstreamClient | undefined;
  /** Waits until the server is ready (see ServerHandle.whenReady). */
  whenReady(timeoutMs: number, signal?: AbortSignal): Promise<UpstreamClient>;
}

/** The options of one relayed call: they go to the transport as they are. */
export interface RelayOptions {
  /** The transport's deadline, in ms; 0 for none. */
  timeout: number;
  /** How long the call may wait for the server to become ready, in ms. */
  waitMs: number;
  /** Gives the call up (never a signal: none is made unless a wait needs one). */
  cancellation: Cancellation;
  onRequestId?: (id: RequestId) => void;
}

/**
 * The calls one server is sent: through its concurrency gate (at most `maxConcurrency` with the
 * transport, at most `maxQueue` waiting), counted in its stats, their errors made clear. `onAuthLost`
 * hears a call that failed because the session lost its authorization.
 */
export class ServerCalls {
  private readonly gate: ConcurrencyGate;

  constructor(
    private readonly host: CallsHost,
    concurrency: number,
    private readonly onAuthLost: (err: AuthRequiredError, client: UpstreamClient) => void,
  ) {
    this.gate = new ConcurrencyGate(concurrency);
  }

  get concurrency(): number {
    return this.gate.concurrency;
  }

  set concurrency(n: number) {
    this.gate.concurrency = n;
  }

  /** See ServerHandle.request. */
  async request<T = JsonObject>(
    method: string,
    params: JsonObject | undefined,
    options: TransportRequestOptions & { waitMs: number; cancellation?: Cancellation },
  ): Promise<T> {
    const { host, gate } = this;
    const c = options.cancellation;
    const client = host.usableClient ?? (await host.whenReady(options.waitMs, c ? c.signal : options.signal));
    const waiting = gate.waiting;
    if (waiting >= host.config.maxQueue)
      throw new QueueFullError(`Server "${host.name}" has ${waiting} requests waiting (maxQueue ${host.config.maxQueue})`);
    const started = host.stats.begin();
    const reqOptions: TransportRequestOptions = { timeout: options.timeout ?? 0 };
    if (c) reqOptions.cancellation = c;
    else if (options.signal) reqOptions.signal = options.signal;
    // Called through `options`: a relay's options object is its request entry, whose method sets its own field.
    if (options.onRequestId) reqOptions.onRequestId = (id) => options.onRequestId?.(id);
    let result: T;
    try {
      // Only a request that must wait for a slot pays for a signal to leave the line early.
      if (!gate.tryAcquire()) await gate.acquire(c ? c.signal : options.signal);
      try {
        result = await client.request<T>(method, params, reqOptions);
      } finally {
        gate.release();
      }
    } catch (err) {
      throw this.failed(err, client, started);
    }
    host.stats.end(started);
    return result;
  }

  /** See ServerHandle.relay. */
  relay(method: string, params: JsonObject | undefined, options: RelayOptions, reply: RequestReply<JsonObject>): void {
    const client = this.host.usableClient;
    if (client === undefined || !(this.host.config.maxQueue > 0) || !this.gate.tryAcquire()) {
      this.request<JsonObject>(method, params, options).then(
        (result) => reply.resolve(result),
        (err: unknown) => reply.reject(err),
      );
      return;
    }
    const call = new GatedCall(this, client, this.host.stats.begin(), reply);
    try {
      client.call(method, params, options, call);
    } catch (err) {
      // A transport that throws instead of refusing through the reply must not keep the slot.
      call.reject(err);
    }
  }

  /** The end of a call {@link relay} sent holding a slot; returns the error to give its caller when it failed. */
  ended(client: UpstreamClient, started: number, failed: boolean, err?: unknown): unknown {
    this.gate.release();
    if (!failed) {
      this.host.stats.end(started);
      return undefined;
    }
    return this.failed(err, client, started);
  }

  /** A call failed: counted, made clear (see clarifyRequestError), and reported when the server wants new authorization. */
  private failed(err: unknown, client: UpstreamClient, started: number): unknown {
    const e = clarifyRequestError(err, this.host);
    this.host.stats.end(started, e);
    // A step-up concerns this request only; otherwise no request can succeed any more.
    if (e instanceof AuthRequiredError && !e.stepUp) this.onAuthLost(e, client);
    return e;
  }
}

/** A relayed call holding a slot of its server's gate: settling it frees the slot and counts the call. */
class GatedCall implements RequestReply<JsonObject> {
  private settled = false;

  constructor(
    private readonly calls: ServerCalls,
    private readonly client: UpstreamClient,
    private readonly started: number,
    private readonly reply: RequestReply<JsonObject>,
  ) {}

  resolve(result: JsonObject): void {
    if (this.settled) return;
    this.settled = true;
    this.calls.ended(this.client, this.started, false);
    this.reply.resolve(result);
  }

  reject(reason: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.reply.reject(this.calls.ended(this.client, this.started, true, reason));
  }
}
