import {
  AuthRequiredError,
  McpRemoteError,
  QueueFullError,
  ServerUnavailableError,
  type Cancellation,
  type JsonObject,
  type RequestCaller,
  type RequestId,
  type RequestReply,
  type ServerState,
} from "@mcpd/protocol";
import { CallQueue } from "./call-queue.js";
import { clarifyRequestError, versionRefused } from "./request-error.js";
import type { ServerStats } from "./server-stats.js";
import type { UpstreamClient, UpstreamRequestOptions } from "./upstream-client.js";

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
  /** The client the call is relayed for (a 2026 server gets its capabilities and info in the request's `_meta`). */
  readonly caller?: RequestCaller;
}

/** What a session's owner is told when a call shows the session can take no request any more. */
export interface SessionLoss {
  /** The session lost its authorization (not a step-up). */
  authorization(err: AuthRequiredError, client: UpstreamClient): void;
  /** The server refused the session's protocol version; `why` in words (see versionRefused). */
  versionRefused(why: string, client: UpstreamClient): void;
}

/** p-queue priority of the session's own re-reads of its lists: before every call waiting (calls have 0). */
const REREAD_PRIORITY = 1;

/**
 * The calls one server is sent: within its concurrency limit (at most `maxConcurrency` with the
 * transport), the rest waiting in its {@link CallQueue} (at most `maxQueue`), counted in its stats, their
 * errors made clear. `lost` hears a call that failed because the session can take no request any more.
 *
 * The queue waits while the server starts or restarts ({@link stateChanged}): a call that was waiting for
 * a slot when the session died goes to the next session, never having reached the dead one.
 */
export class ServerCalls {
  private readonly queue: CallQueue;
  private stateHold = false;

  constructor(
    private readonly host: CallsHost,
    concurrency: number,
    private readonly lost: SessionLoss,
  ) {
    this.queue = new CallQueue(concurrency);
  }

  get concurrency(): number {
    return this.queue.concurrency;
  }

  set concurrency(n: number) {
    this.queue.concurrency = n;
  }

  /** Calls waiting for a slot. */
  get waiting(): number {
    return this.queue.waiting;
  }

  /** Whether the queue is held: a restart or a drain is under way, and no call starts. */
  get held(): boolean {
    return this.queue.held;
  }

  /**
   * The server's state changed: the queue is held while it starts or restarts, and goes on in any other
   * state, where a call at its turn is sent, waits for the closing session's restart, or fails as a new one
   * would (a stopped server is not started again for it).
   */
  stateChanged(state: ServerState): void {
    const hold = state === "starting" || state === "restarting";
    if (hold === this.stateHold) return;
    this.stateHold = hold;
    if (hold) this.queue.hold();
    else this.queue.unhold();
  }

  /** Runs `fn` with the queue held: calls waiting for a slot, and new ones, wait until it is done. */
  whileHeld<T>(fn: () => Promise<T>): Promise<T> {
    return this.queue.whileHeld(fn);
  }

  /** Resolves true once no call holds a slot, false after `timeoutMs`; see {@link CallQueue.settled}. */
  settled(timeoutMs: number): Promise<boolean> {
    return this.queue.settled(timeoutMs);
  }

  /** Runs one of the session's own re-reads of a list in a slot, before every call waiting. */
  reread(task: () => Promise<void>): Promise<void> {
    return this.queue.run(task, REREAD_PRIORITY);
  }

  /**
   * Sends one request upstream within the server's concurrency limit, or waits in its queue for a slot.
   * Waits for readiness first (bounded by `waitMs`). The transport's own deadline is left to the caller
   * (`options.timeout`). With a `cancellation`, no AbortSignal is made unless a wait needs one: once the
   * request is with the transport, a cancel reaches it by request id (every transport cancels by id).
   * @throws ServerUnavailableError, QueueFullError, and whatever the session throws.
   */
  async request<T = JsonObject>(
    method: string,
    params: JsonObject | undefined,
    options: UpstreamRequestOptions & { waitMs: number; cancellation?: Cancellation },
  ): Promise<T> {
    const { host, queue } = this;
    const c = options.cancellation;
    let client = host.usableClient ?? (await host.whenReady(options.waitMs, c ? c.signal : options.signal));
    const slot = queue.tryAcquire();
    const waiting = queue.waiting;
    if (!slot && waiting >= host.config.maxQueue)
      throw new QueueFullError(`Server "${host.name}" has ${waiting} requests waiting (maxQueue ${host.config.maxQueue})`);
    const started = host.stats.begin();
    const reqOptions: UpstreamRequestOptions = { timeout: options.timeout ?? 0 };
    if (options.caller) reqOptions.caller = options.caller;
    if (c) reqOptions.cancellation = c;
    else if (options.signal) reqOptions.signal = options.signal;
    // Called through `options`: a relay's options object is its request entry, whose method sets its own field.
    if (options.onRequestId) reqOptions.onRequestId = (id) => options.onRequestId?.(id);
    let result: T;
    try {
      if (slot) {
        try {
          result = await client.request<T>(method, params, reqOptions);
        } finally {
          queue.release();
        }
      } else {
        // Only a call that must wait pays for a signal: the queue drops it at once when it is cancelled.
        const signal = c ? c.signal : options.signal;
        const send = (at: UpstreamClient): Promise<T> => {
          client = at;
          return at.request<T>(method, params, reqOptions);
        };
        result = await queue.enqueue(
          () => {
            const usable = host.usableClient;
            return usable ? send(usable) : this.sessionAtTurn(options.waitMs, signal).then(send);
          },
          0,
          signal,
        );
      }
    } catch (err) {
      throw this.failed(err, client, started);
    }
    host.stats.end(started);
    return result;
  }

  /**
   * The session a queued call goes to at its turn when none is usable then (the session just closed, or the
   * server left `ready`): it waits for the next one, unless the server cannot become ready; a stopped server
   * fails it instead of being started again for it. (The queue waited while the server restarted, so a call
   * that waited is sent to the session there is at its turn, which may be a new one.)
   */
  private sessionAtTurn(waitMs: number, signal: AbortSignal | undefined): Promise<UpstreamClient> {
    const { host } = this;
    if (host.state === "stopped") return Promise.reject(new ServerUnavailableError(host.name, host.state, host.stateReason || undefined));
    return host.whenReady(waitMs, signal);
  }

  /**
   * {@link request} for a relay: `reply` learns the outcome, with the same results and errors. A server
   * that is ready with a free slot and nobody waiting (nearly every call) takes the request at once, and
   * the call costs one small object here, no promise; otherwise it goes the way of {@link request}.
   */
  relay(method: string, params: JsonObject | undefined, options: RelayOptions, reply: RequestReply<JsonObject>): void {
    const client = this.host.usableClient;
    if (client === undefined || !this.queue.tryAcquire()) {
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
    this.queue.release();
    if (!failed) {
      this.host.stats.end(started);
      return undefined;
    }
    return this.failed(err, client, started);
  }

  /**
   * A call failed: counted, made clear (see clarifyRequestError), and reported when the session can take no
   * request any more: the server wants new authorization, or refused the session's protocol version (the
   * call then fails -32060 saying so and to send it again: the server did not run it).
   */
  private failed(err: unknown, client: UpstreamClient, started: number): unknown {
    // A process mcpd started cannot become another build mid-session: only a remote server is opened again.
    const remote = client.era === "2026" && client.transport.info().mode !== "stdio";
    const refused = remote ? versionRefused(err, client.protocolVersion) : undefined;
    const e = refused
      ? new ServerUnavailableError(
          this.host.name,
          "restarting",
          `${refused}: reconnecting to find the era it speaks now; send the request again`,
        )
      : clarifyRequestError(err, this.host);
    // An error object the server sent is an answer: the health monitor need not ping a server that answers.
    this.host.stats.end(started, e, err instanceof McpRemoteError);
    if (refused) this.lost.versionRefused(refused, client);
    // A step-up concerns this request only; otherwise no request can succeed any more.
    else if (e instanceof AuthRequiredError && !e.stepUp) this.lost.authorization(e, client);
    return e;
  }
}

/** A relayed call holding a slot of its server's limit: settling it frees the slot and counts the call. */
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
