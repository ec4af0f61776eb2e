import { randomUUID } from "node:crypto";
import { McpdError, WireCode, isObject, type JsonObject, type JsonRpcRequest, type RequestId } from "@mcpd/protocol";
import type { InFlight, InFlightRequests } from "./in-flight.js";
import { StateSealer, type StateRefusal } from "./sealed-state.js";

/** The key mcpd gives the one request of an `input_required` it makes (the retry's `inputResponses` answer under it). */
export const HELD_KEY = "mcpd";

/** A connection whose 2026-era call a 2025-era server asks something of (a Session). */
export interface HoldingConnection {
  readonly id: string;
  readonly inFlight: InFlightRequests;
  send(message: object): void;
}

/** A 2025 server's request waiting for a 2026-era client's retry. */
interface Held {
  readonly call: InFlight;
  readonly timer: NodeJS.Timeout;
  /** `<server>\0<the server's request id>`: what its `notifications/cancelled` names. */
  readonly key: string;
  readonly method: string;
  /** Set when the server cancelled its request: it is no longer answered, and a retry is refused saying why. */
  cancelled?: string;
  answer(result: JsonObject): void;
  fail(error: unknown): void;
}

const REFUSED: Record<StateRefusal, string> = {
  tampered: "requestState was not issued by mcpd, or was altered",
  foreign: "requestState was issued to another connection",
  expired: "requestState has expired",
};

/**
 * A 2025-era server's mid-call request (elicitation, sampling, roots) for a 2026-era client, which takes no
 * server-to-client requests: the client's call is answered `input_required` carrying the request and a
 * `requestState` mcpd seals (sealed-state.ts); the call itself stays in flight upstream, held here, apart
 * from its connection (over HTTP the response that carried `input_required` has ended). The retry with that
 * state answers the server with its `inputResponses` and takes the call over: the server's final answer
 * goes to the retry. No retry within the state's lifetime: the server's request fails and the call is
 * cancelled upstream. A server that cancels its request (`notifications/cancelled`) gets no answer to it;
 * a retry with its state is then refused saying so, and the call is cancelled upstream.
 */
export class HeldCalls {
  private readonly sealer = new StateSealer();
  private readonly held = new Map<string, Held>();
  /** The held requests by `<server>\0<request id>` (see {@link Held.key}), to their `ref`. */
  private readonly byRequest = new Map<string, string>();
  /** What a connection's states are bound to, when not the connection itself: an HTTP request's token. */
  private readonly bindings = new WeakMap<HoldingConnection, string>();

  /** @param ttlMs a state's lifetime now (`mcpd.requestStateTtlMs`) */
  constructor(private readonly ttlMs: () => number) {}

  /** Server requests waiting for a retry. */
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

  /** Holds `call` of `conn` for the server's request `req`; the promise is the server's answer. */
  hold(conn: HoldingConnection, call: InFlight, req: JsonRpcRequest): Promise<JsonObject> {
    const ref = randomUUID();
    const ttl = this.ttlMs();
    return new Promise<JsonObject>((answer, fail) => {
      const timer = setTimeout(() => this.expire(ref), ttl);
      timer.unref();
      const key = `${call.handle.name}\0${String(req.id)}`;
      this.held.set(ref, { call, timer, key, method: req.method, answer, fail });
      this.byRequest.set(key, ref);
      // The call is no longer its connection's: an HTTP response ending must not cancel it.
      conn.inFlight.release(call);
      const requestState = this.sealer.seal({ ref, bind: this.bindingOf(conn), exp: Date.now() + ttl });
      const inputRequests = { [HELD_KEY]: { method: req.method, params: req.params ?? {} } };
      conn.send({ jsonrpc: "2.0", id: call.id, result: { resultType: "input_required", inputRequests, requestState } });
    });
  }

  /**
   * A 2026-era request carrying `params.requestState`: when the state is mcpd's, the retry is served here
   * (true): refused with -32602 (MCPD_REQUEST_STATE_INVALID) when altered, another connection's, expired or
   * used already; else the server gets the answer and `conn` the call, under `id`. False: a server's state.
   */
  claim(conn: HoldingConnection, id: RequestId, params: JsonObject | undefined): boolean {
    const state = params?.requestState;
    if (!StateSealer.isOurs(state)) return false;
    const claims = this.sealer.open(state, this.bindingOf(conn));
    const held = typeof claims === "string" ? undefined : this.held.get(claims.ref);
    if (typeof claims === "string" || held === undefined) {
      const why = typeof claims === "string" ? REFUSED[claims] : "requestState has expired or was used already";
      const error = new McpdError("MCPD_REQUEST_STATE_INVALID", `${why}; call again without it`);
      conn.send({ jsonrpc: "2.0", id, error: { code: WireCode.InvalidParams, message: error.message, data: { mcpdCode: error.code } } });
      return true;
    }
    this.forget(claims.ref, held);
    if (held.cancelled !== undefined) {
      const why = `the server cancelled the ${held.method} this requestState answers (${held.cancelled}); call again without it`;
      conn.send({
        jsonrpc: "2.0",
        id,
        error: { code: WireCode.InvalidParams, message: why, data: { mcpdCode: "MCPD_REQUEST_STATE_INVALID" } },
      });
      giveUp(held.call, "the server cancelled the request the client was asked");
      return true;
    }
    conn.inFlight.adopt(held.call, id);
    const responses = params?.inputResponses;
    const answer = isObject(responses) ? responses[HELD_KEY] : undefined;
    if (isObject(answer)) held.answer(answer);
    else held.fail(new McpdError("MCPD_NO_CLIENT_FOR_REQUEST", `The client retried without an answer under inputResponses["${HELD_KEY}"]`));
    return true;
  }

  /**
   * The server cancelled its request `requestId` (its `notifications/cancelled`): when it is held here, it
   * is dropped (never answered, as the spec asks of a cancelled request) and a retry with its state is
   * refused. True when it was held.
   */
  serverCancelled(server: string, requestId: unknown, reason: string | undefined): boolean {
    const ref = this.byRequest.get(`${server}\0${String(requestId)}`);
    const held = ref === undefined ? undefined : this.held.get(ref);
    if (held === undefined || held.cancelled !== undefined) return false;
    this.byRequest.delete(held.key);
    held.cancelled = reason === undefined || reason === "" ? "no reason given" : reason;
    return true;
  }

  private forget(ref: string, held: Held): void {
    this.held.delete(ref);
    if (this.byRequest.get(held.key) === ref) this.byRequest.delete(held.key);
    clearTimeout(held.timer);
  }

  /** No retry in time: the server's request fails (unless it cancelled it), and the call is given up upstream. */
  private expire(ref: string): void {
    const held = this.held.get(ref);
    if (!held) return;
    this.forget(ref, held);
    if (held.cancelled === undefined)
      held.fail(
        new McpdError(
          "MCPD_NO_CLIENT_FOR_REQUEST",
          "The 2026-era client did not retry with its requestState in time (mcpd.requestStateTtlMs)",
        ),
      );
    giveUp(held.call, "the client did not retry in time");
  }
}

/** Cancels a held call upstream: no client will take its answer. */
function giveUp(call: InFlight, reason: string): void {
  call.cancelled = true;
  call.cancellation.cancel(new McpdError("MCPD_ABORTED", reason));
}
