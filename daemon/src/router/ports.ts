/**
 * What a downstream {@link Session} (session.ts) needs from the rest of the daemon, as narrow interfaces:
 * the servers (upstream-port.ts), secret masking, and the tables every connection shares. Types only; the
 * Router provides them (router.ts), so a session never reaches through it into the manager or the scrubber.
 */
import type { ClientCapabilities, JsonObject, JsonRpcErrorObject, Logger, RequestCaller, RequestId } from "@mcpd/protocol";
import type { Catalog } from "./catalog.js";
import type { OutgoingRequests } from "./outgoing-requests.js";
import type { Profiles } from "./profiles.js";
import type { ServerDirectory, Upstream } from "./upstream-port.js";

/** Where a session's outgoing messages go (a socket, in the daemon). */
export interface Outbound {
  /**
   * Queues one message. `related`: the client's request a notification belongs to (an HTTP session sends
   * it on that request's stream, before its answer; others ignore it). Returns false when the connection
   * is gone or over its buffer bound.
   */
  send(message: object, related?: RequestId): boolean;
  /**
   * Whether its client can take messages that answer none of its requests (list changes, log messages)
   * now. Undefined: always (a socket connection). An HTTP session without its GET stream cannot.
   */
  readonly listening?: boolean;
}

/** Masks the configured servers' secret values (SecretScrubber). */
export interface Scrubber {
  /** `text` with every known secret value replaced. */
  scrub(text: string): string;
  /** A JSON value with every string scrubbed; `undefined` when it cannot be (no JSON form). */
  scrubValue<T>(value: T): T | undefined;
}

/**
 * A connection as the parts serving it see it: where its answers and notifications go, and who its client
 * says it is (its `initialize`'s capabilities and info, its `logging/setLevel`), which a 2026 server is
 * sent with each request relayed for it.
 */
export interface Downstream extends RequestCaller {
  /** Sends one message (dropped once the connection is closed). */
  send(message: object): void;
  /** Sends an error answer, with configured secret values masked. */
  replyError(id: RequestId | null, error: JsonRpcErrorObject): void;
}

/**
 * A connection that mcpd can ask for input on a server's behalf (a Session): where the requests go, what
 * its client declared, and which of its calls are 2026-era (those take `input_required` as it is).
 */
export interface InputAsker extends Downstream {
  readonly outgoing: OutgoingRequests;
  /** Its id and client name, for messages. */
  readonly label: string;
  /** Its 2026-era calls, once it made one. */
  readonly modern: { has(id: RequestId): boolean; callerOf(id: RequestId): RequestCaller | undefined } | undefined;
  /** What its client declared in initialize (see client-capabilities.ts `declares`). */
  readonly clientCapabilities: ClientCapabilities;
  /** A server's params as its view shows them. */
  tag(handle: Upstream, params: JsonObject | undefined): JsonObject | undefined;
}

/** The `input_required` limits (`mcpd.maxInputRounds`, `mcpd.requestStateTtlMs`), followed as reloads change them. */
export interface InputLimits {
  maxRounds: number;
  stateTtlMs: number;
}

/** Where a 2026-era retry carrying mcpd's own `requestState` is served (held-calls.ts `HeldCalls.claim`). */
export interface HeldRetries {
  /** True when the retry was mcpd's to serve (and was); false: a server's state, to route as any call. */
  claim(
    conn: { readonly id: string; readonly inFlight: unknown; send(message: object): void },
    id: RequestId,
    method: string,
    params: JsonObject | undefined,
  ): boolean;
}

/** A request in flight as its progress sees it: the server it went to, and its timeout to restart. */
export interface ProgressTarget {
  readonly handle: Upstream;
  /** Progress arrived: restart the request's timeout. */
  touch(): void;
}

/** Rewrites progress tokens: a request's own token becomes a daemon-unique one upstream, and back. */
export interface ProgressRegistry {
  /** A daemon-unique token for `token` of a request of `owner`; progress for it goes to `owner` as `token`. */
  register(owner: Downstream, token: string | number, entry: ProgressTarget): string;
  /** The request ended: progress for that token is dropped from now on. */
  release(upstreamToken: string): void;
  /**
   * The request was taken over by `owner`'s request with its own `token` (a retry after `input_required`,
   * held-calls.ts): progress for `upstreamToken` goes there from now on; no token: it only restarts the
   * request's timeout.
   */
  move(upstreamToken: string, owner: Downstream, token: string | number | undefined): void;
}

/** A connection holding resource subscriptions. */
export interface Subscriber {
  /** The subscription keys (subscribed-forms.ts `subscriptionKey`: upstream session and URI) of this connection. */
  readonly subscriptions: Set<string>;
  /** Sends a server's notification (`notifications/resources/updated`) to this connection. */
  relayNotification(handle: Upstream, method: string, params: JsonObject | undefined): void;
}

/** Upstream resource subscriptions, reference-counted per server and URI over every connection. */
export interface SubscriptionRegistry {
  /** Subscribes upstream unless another connection already did; waits up to `waitMs` for the server. */
  subscribe(subscriber: Subscriber, handle: Upstream, uri: string, waitMs: number): Promise<void>;
  /** Drops one connection's subscription (by its key); the upstream one ends with the last. */
  unsubscribe(subscriber: Subscriber, key: string): Promise<void>;
}

/**
 * Starts the span of each request relayed to a server (telemetry/, when `mcpd.telemetry.otlp` is set). It
 * must not throw: a relay never fails for its span.
 */
export interface CallTracer {
  /** The span of `method` relayed to `server` with `params` (as the client sent them, progress token swapped). */
  start(server: string, method: string, params: JsonObject | undefined): TracedCall;
}

/** One relayed request's span. */
export interface TracedCall {
  /** The params to send upstream: `_meta.traceparent` names this span when it is exported, else the params as given. */
  readonly params: JsonObject | undefined;
  /**
   * The request is being sent to `to`: `requestId` is the id the upstream gave it (`jsonrpc.request.id`);
   * `to` tells the server's session (`mcp.session.id`), protocol version and transport.
   */
  sent(requestId: RequestId, to: CallTarget): void;
  /** The request settled: with the server's result, or failed with `error` (a cancellation included). */
  end(error: unknown, result?: JsonObject): void;
}

/** What a span reads of the server a request is sent to, once it is sent. */
export type CallTarget = Pick<Upstream, "sessionId" | "config" | "client">;

/** Where the relay path finds the current tracer: undefined while no span is exported (one property read per call). */
export interface CallSpans {
  tracer: CallTracer | undefined;
}

/** Hears that a connection's last request in flight to a server settled (the shutdown's drain waits for that). */
export interface InFlightWatcher {
  inFlightEmptied(): void;
  /** The `input_required` limits; absent: the defaults. */
  readonly input?: InputLimits;
  /** The spans of relayed requests; absent: none. */
  readonly spans?: CallSpans;
}

/** Everything a downstream session uses that is not its own. */
export interface SessionContext extends InFlightWatcher {
  readonly servers: ServerDirectory;
  /** Masks secrets in what mcpd itself says (error messages and data, state reasons). */
  readonly secrets: Scrubber;
  readonly log: Logger;
  /** The aggregate view's lookup tables. */
  readonly catalog: Catalog;
  /** 2025 servers' requests held for 2026-era clients' retries (held-calls.ts `HeldCalls`). */
  readonly held: HeldRetries;
  /** The config's profiles, which `mcpd/select` picks from. */
  readonly profiles: Profiles;
  readonly progress: ProgressRegistry;
  readonly subscriptions: SubscriptionRegistry;
  /** Sets a server to the most verbose logging level any connection viewing it asked for. */
  relevel(server: string): void;
}
