import { McpdError, targetOf, type JsonObject, type JsonRpcRequest, type RequestId } from "@mcpd/protocol";
import { configuredRoots } from "./configured-roots.js";
import type { InFlight, InFlightRequests } from "./in-flight.js";
import type { Upstream } from "./upstream-port.js";
import type { StateClaims } from "./sealed-state.js";

/** What a held round is made of, and how its server requests and its call end (held-calls.ts). */

/** A connection whose 2026-era call a 2025-era server asks something of (a Session). */
export interface HoldingConnection {
  readonly id: string;
  readonly inFlight: InFlightRequests;
  /** The private sessions of per-client servers it uses (a retry's connection takes over the held call's). */
  privates?: Set<Upstream> | undefined;
  /** Its 2026-era calls: a call's method and target as the client sent them (its state is sealed to them). */
  readonly modern?: { requestOf(id: RequestId): { method: string; target: string | undefined } | undefined } | undefined;
  send(message: object): void;
}

/** One request of the server's in a round: its key in `inputRequests`, and how its answer reaches the server. */
export interface Asked {
  readonly key: string;
  /** `upstreamRequestKey` (upstream-keys.ts) of the server's request: what its `notifications/cancelled` names. */
  readonly serverKey: string;
  readonly req: JsonRpcRequest;
  /** Set when the server cancelled this request: it is no longer answered, and a retry is refused saying why. */
  cancelled?: string;
  answer(result: JsonObject): void;
  fail(error: unknown): void;
}

/** A 2025 server's requests of one round, waiting for a 2026-era client's retry. */
export interface Held {
  readonly call: InFlight;
  /** The connection whose call it was. */
  readonly conn: HoldingConnection;
  /**
   * The call's private session (a per-client server's) outlived that connection for the retry (see
   * `HeldCalls.keptAt`): the retry's connection takes it over, else it ends with the held call.
   */
  kept: boolean;
  readonly timer: NodeJS.Timeout;
  readonly asked: readonly Asked[];
}

/**
 * The call a round was gathered for ended (answered, or cancelled by its client) before the round went out:
 * nobody is asked; the server's requests are answered as for a 2025 client without the capability
 * (`roots/list` with the configured roots, anything else -32066), those it cancelled not at all.
 */
export function noCallFor(call: InFlight, asked: readonly Asked[]): void {
  const why = call.cancelled ? "its client cancelled it" : "the server answered it";
  for (const a of asked) {
    if (a.cancelled !== undefined) continue;
    if (a.req.method === "roots/list") a.answer(configuredRoots(call.handle));
    else
      a.fail(new McpdError("MCPD_NO_CLIENT_FOR_REQUEST", `No client can answer ${a.req.method}: the call it was for has ended (${why})`));
  }
}

/** Why a retry is not the request its state was issued for (its method or target differs); undefined: it is. */
export function otherRequest(claims: StateClaims, method: string, params: JsonObject | undefined): string | undefined {
  const issued = `${claims.method}${claims.target !== undefined ? ` of ${JSON.stringify(claims.target)}` : ""}`;
  if (claims.method !== method) return `requestState was issued for ${issued}, not ${method}; retry that request with it`;
  const target = targetOf(method, params)?.name;
  if (claims.target !== target)
    return `requestState was issued for ${issued}, not ${target !== undefined ? JSON.stringify(target) : "a request naming nothing"}; retry that request with it`;
  return undefined;
}

/** Fails every request of a round the server did not cancel. */
export function failAll(held: Held, error: McpdError): void {
  for (const asked of held.asked) if (asked.cancelled === undefined) asked.fail(error);
}

/** Cancels a held call upstream: no client will take its answer. */
export function giveUp(call: InFlight, reason: string): void {
  call.cancelled = true;
  call.cancellation.cancel(new McpdError("MCPD_ABORTED", reason));
}
