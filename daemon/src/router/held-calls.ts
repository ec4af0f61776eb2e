import { randomUUID } from "node:crypto";
import { McpdError, WireCode, isObject, type JsonObject, type JsonRpcRequest, type RequestId } from "@mcpd/protocol";
import type { InFlight } from "./in-flight.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { StateSealer, type StateRefusal } from "./sealed-state.js";
import type { ServerDirectory, Upstream } from "./upstream-port.js";
import { upstreamRequestKey } from "./upstream-keys.js";
import { failAll, giveUp, noCallFor, otherRequest, type Asked, type Held, type HoldingConnection } from "./held-rounds.js";

export type { HoldingConnection };

/**
 * The key mcpd gives the first request of an `input_required` it makes (the retry's `inputResponses` answer
 * under it); the server's further requests in the same round are `mcpd-2`, `mcpd-3`, ...
 */
export const HELD_KEY = "mcpd";

/** Most requests one gathering waits for more after. */
const MAX_GATHERED = 32;

/** A round being gathered: the server's requests for one call, each within `inputGatherMs` of the one before. */
interface Gathering {
  readonly conn: HoldingConnection;
  readonly asked: Asked[];
  timer: NodeJS.Timeout;
}

const REFUSED: Record<StateRefusal, string> = {
  tampered: "requestState was not issued by mcpd, or was altered",
  foreign: "requestState was issued to another connection",
  expired: "requestState has expired",
};

/**
 * A 2025-era server's mid-call requests (elicitation, sampling, roots) for a 2026-era client, which takes no
 * server-to-client requests: the client's call is answered `input_required` carrying the requests (those
 * that came close together, see {@link HeldCalls.hold}, each under its own key) and a `requestState` mcpd
 * seals (sealed-state.ts); the call itself stays in flight upstream, held here, apart from its connection
 * (over HTTP the response that carried `input_required` has ended). The retry with that state answers the
 * server with its `inputResponses` and takes the call over: the server's final answer goes to the retry. No
 * retry within the state's lifetime: the server's requests fail and the call is cancelled upstream. A server
 * that cancels a request (`notifications/cancelled`) gets no answer to it: a retry with the state of its
 * round is refused saying so, and the call is cancelled upstream.
 */
export class HeldCalls {
  private readonly sealer = new StateSealer();
  private readonly held = new Map<string, Held>();
  /** Calls whose round is being gathered. */
  private readonly gathering = new Map<InFlight, Gathering>();
  /** The requests gathered or held, by {@link upstreamRequestKey} (see {@link Asked.serverKey}). */
  private readonly byRequest = new Map<string, { asked: Asked; call: InFlight }>();
  /** What a connection's states are bound to, when not the connection itself: an HTTP request's token. */
  private readonly bindings = new WeakMap<HoldingConnection, string>();

  /**
   * @param ttlMs a state's lifetime now (`mcpd.requestStateTtlMs`)
   * @param privates where a private session kept for a retry goes to the retry's connection, or ends
   */
  constructor(
    private readonly ttlMs: () => number,
    private readonly privates: Pick<ServerDirectory, "movePrivate" | "stopPrivate">,
  ) {}

  /** Server requests waiting for a retry (rounds). */
  get size(): number {
    return this.held.size;
  }

  /**
   * Binds the states issued to `conn` to `binding` instead of `conn` alone: each 2026-era HTTP request is a
   * connection of its own, so its retry (another request) is recognised by the token both were sent with.
   */
  bindTo(conn: HoldingConnection, binding: string): void {
    this.bindings.set(conn, binding);
  }

  private bindingOf(conn: HoldingConnection): string {
    return this.bindings.get(conn) ?? `socket:${conn.id}`;
  }

  /**
   * Holds `call` of `conn` for the server's request `req`; the promise is the server's answer. Requests for
   * the same call that arrive within `inputGatherMs` of the one before (a server asking for several things at
   * once) go out together, in one `input_required`: the call stays its connection's until then, so they find it.
   */
  hold(conn: HoldingConnection, call: InFlight, req: JsonRpcRequest): Promise<JsonObject> {
    return new Promise<JsonObject>((answer, fail) => {
      const serverKey = upstreamRequestKey(call.handle, req.id);
      const gathering = this.gathering.get(call);
      if (gathering !== undefined) {
        const asked: Asked = { key: `${HELD_KEY}-${gathering.asked.length + 1}`, serverKey, req, answer, fail };
        gathering.asked.push(asked);
        this.byRequest.set(serverKey, { asked, call });
        // Bounded: a server that keeps asking gets its round after MAX_GATHERED requests, at the latest.
        if (gathering.asked.length < MAX_GATHERED) gathering.timer.refresh();
        return;
      }
      const timer = setTimeout(() => this.ask(call), RUNTIME_DEFAULTS.inputGatherMs);
      timer.unref();
      const asked: Asked = { key: HELD_KEY, serverKey, req, answer, fail };
      this.gathering.set(call, { conn, asked: [asked], timer });
      this.byRequest.set(serverKey, { asked, call });
    });
  }

  /** The gathering ended: the call is answered `input_required` with every request gathered for it. */
  private ask(call: InFlight): void {
    const gathering = this.gathering.get(call);
    if (gathering === undefined) return;
    this.gathering.delete(call);
    const { conn, asked } = gathering;
    if (call.settled || call.cancelled) {
      // No response goes out for it (it had its one): nothing is held.
      for (const a of asked) if (this.byRequest.get(a.serverKey)?.asked === a) this.byRequest.delete(a.serverKey);
      return noCallFor(call, asked);
    }
    const ref = randomUUID();
    const ttl = this.ttlMs();
    const timer = setTimeout(() => this.expire(ref), ttl);
    timer.unref();
    this.held.set(ref, { call, conn, kept: false, timer, asked });
    // The call is no longer its connection's: an HTTP response ending must not cancel it.
    conn.inFlight.release(call);
    const request = conn.modern?.requestOf(call.id) ?? { method: call.method, target: undefined };
    const requestState = this.sealer.seal({
      ref,
      bind: this.bindingOf(conn),
      exp: Date.now() + ttl,
      method: request.method,
      ...(request.target !== undefined ? { target: request.target } : {}),
    });
    const inputRequests = Object.fromEntries(asked.map((a) => [a.key, { method: a.req.method, params: a.req.params ?? {} }]));
    conn.send({ jsonrpc: "2.0", id: call.id, result: { resultType: "input_required", inputRequests, requestState } });
  }

  /**
   * A 2026-era request carrying `params.requestState`: when the state is mcpd's, the retry is served here
   * (true): refused with -32602 (MCPD_REQUEST_STATE_INVALID) when altered, another connection's, expired,
   * used already, presented on another request than the one it was issued for (another method, tool,
   * prompt or resource: the state stays good for that one), or when the server cancelled a request it
   * answers; else the server gets the answers and `conn` the call, under `id`. False: a server's state.
   */
  claim(conn: HoldingConnection, id: RequestId, method: string, params: JsonObject | undefined): boolean {
    const state = params?.requestState;
    if (!StateSealer.isOurs(state)) return false;
    const claims = this.sealer.open(state, this.bindingOf(conn));
    const other = typeof claims === "string" ? undefined : otherRequest(claims, method, params);
    if (other !== undefined) {
      const error = new McpdError("MCPD_REQUEST_STATE_INVALID", other);
      conn.send({ jsonrpc: "2.0", id, error: { code: WireCode.InvalidParams, message: error.message, data: { mcpdCode: error.code } } });
      return true;
    }
    const held = typeof claims === "string" ? undefined : this.held.get(claims.ref);
    if (typeof claims === "string" || held === undefined) {
      const why = typeof claims === "string" ? REFUSED[claims] : "requestState has expired or was used already";
      const error = new McpdError("MCPD_REQUEST_STATE_INVALID", `${why}; call again without it`);
      conn.send({ jsonrpc: "2.0", id, error: { code: WireCode.InvalidParams, message: error.message, data: { mcpdCode: error.code } } });
      return true;
    }
    this.forget(claims.ref, held);
    const cancelled = held.asked.find((a) => a.cancelled !== undefined);
    if (cancelled !== undefined) {
      const why = `the server cancelled the ${cancelled.req.method} this requestState answers (${cancelled.cancelled}); call again without it`;
      conn.send({
        jsonrpc: "2.0",
        id,
        error: { code: WireCode.InvalidParams, message: why, data: { mcpdCode: "MCPD_REQUEST_STATE_INVALID" } },
      });
      failAll(held, new McpdError("MCPD_NO_CLIENT_FOR_REQUEST", "The server cancelled another request of this round"));
      this.giveUp(held, "the server cancelled the request the client was asked");
      return true;
    }
    if (held.kept) {
      // The call's private session outlived its connection (an HTTP request): it is the retry's now.
      this.privates.movePrivate(held.call.handle, conn.id);
      (conn.privates ??= new Set()).add(held.call.handle);
    }
    const meta = params?._meta;
    const token = isObject(meta) ? meta.progressToken : undefined;
    conn.inFlight.adopt(held.call, id, typeof token === "string" || typeof token === "number" ? token : undefined);
    const responses = params?.inputResponses;
    for (const asked of held.asked) {
      const answer = isObject(responses) ? responses[asked.key] : undefined;
      if (isObject(answer)) asked.answer(answer);
      else
        asked.fail(
          new McpdError("MCPD_NO_CLIENT_FOR_REQUEST", `The client retried without an answer under inputResponses["${asked.key}"]`),
        );
    }
    return true;
  }

  /**
   * The server cancelled its request `requestId` (its `notifications/cancelled`): when it is gathered or
   * held here, it is dropped (never answered, as the spec asks of a cancelled request); a retry with its
   * round's state is refused. True when it was gathered or held.
   */
  serverCancelled(upstream: object, requestId: unknown, reason: string | undefined): boolean {
    const key = upstreamRequestKey(upstream, requestId);
    const entry = this.byRequest.get(key);
    if (entry === undefined || entry.asked.cancelled !== undefined) return false;
    this.byRequest.delete(key);
    entry.asked.cancelled = reason === undefined || reason === "" ? "no reason given" : reason;
    return true;
  }

  /**
   * Connection `conn` is ending: the private sessions (of per-client servers) its calls held here run on,
   * to be kept for their retries, which come on other connections (over HTTP, each 2026-era request is one:
   * its states are bound to a token, see {@link bindTo}). A socket's states are its own: none kept.
   */
  keptAt(conn: HoldingConnection): Set<Upstream> {
    const kept = new Set<Upstream>();
    if (!this.bindings.has(conn)) return kept;
    for (const held of this.held.values()) {
      if (held.conn !== conn || conn.privates?.has(held.call.handle) !== true) continue;
      held.kept = true;
      kept.add(held.call.handle);
    }
    return kept;
  }

  /** Cancels a held call upstream (no client will take its answer), and ends its private session if kept for it. */
  private giveUp(held: Held, reason: string): void {
    giveUp(held.call, reason);
    if (held.kept) void this.privates.stopPrivate(held.call.handle, reason).catch(() => {});
  }

  private forget(ref: string, held: Held): void {
    this.held.delete(ref);
    for (const asked of held.asked) if (this.byRequest.get(asked.serverKey)?.asked === asked) this.byRequest.delete(asked.serverKey);
    clearTimeout(held.timer);
  }

  /** No retry in time: the server's requests fail (those it did not cancel), and the call is given up upstream. */
  private expire(ref: string): void {
    const held = this.held.get(ref);
    if (!held) return;
    this.forget(ref, held);
    failAll(
      held,
      new McpdError(
        "MCPD_NO_CLIENT_FOR_REQUEST",
        "The 2026-era client did not retry with its requestState in time (mcpd.requestStateTtlMs)",
      ),
    );
    this.giveUp(held, "the client did not retry in time");
  }
}
