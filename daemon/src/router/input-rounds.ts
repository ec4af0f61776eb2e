import { McpdError, isObject, type Cancellation, type CancelById, type JsonObject, type RequestId } from "@mcpd/protocol";
import { declares } from "./client-capabilities.js";
import type { Downstream, InputAsker } from "./ports.js";
import type { Upstream } from "./upstream-port.js";

/** Which client capability each request a server may ask a client (2025: on the wire; 2026: in `inputRequests`) needs. */
export const INPUT_CAPABILITY: Readonly<Record<string, string>> = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots",
};

/** A call in flight as its `input_required` rounds see it (an InFlight). */
export interface RoundCall {
  readonly id: RequestId;
  readonly handle: Upstream;
  readonly method: string;
  readonly cancellation: Cancellation;
  /** `input_required` answers so far. */
  rounds: number;
  /** Fails the call (its client gets the error unless it cancelled). */
  reject(reason: unknown): void;
  /** Sends the call upstream again (a new upstream id) with `inputResponses` and `requestState` added to its params. */
  retry(inputResponses: JsonObject, requestState: string | undefined): void;
}

/**
 * Whether mcpd answers a server's `input_required` for this call itself: the caller is a connection mcpd can
 * ask (not a test's bare Downstream) and the call is 2025-era (a 2026-era client gets the result as it is).
 */
export function answersInput(owner: Downstream | InputAsker, id: RequestId): owner is InputAsker {
  return "outgoing" in owner && owner.modern?.has(id) !== true;
}

/** `params` with this round's `inputResponses` and `requestState` (the previous round's taken out). */
export function retryParams(params: JsonObject | undefined, inputResponses: JsonObject, requestState: string | undefined): JsonObject {
  const { inputResponses: _r, requestState: _s, ...rest } = params ?? {};
  const out: JsonObject = { ...rest, inputResponses };
  // Byte for byte: the string is passed on untouched, never parsed.
  if (requestState !== undefined) out.requestState = requestState;
  return out;
}

/**
 * A 2026-era server answered a 2025-era client's call with `input_required`: mcpd sends that client (the
 * call's own connection, never another) the requests the server holds, as 2025 server-to-client requests,
 * and retries the call with their answers and the server's `requestState`; up to `maxRounds` times. A
 * request the client did not declare the capability for fails the call with -32066 saying so.
 */
export function askForInput(call: RoundCall, owner: InputAsker, result: JsonObject, maxRounds: number): void {
  const server = call.handle.name;
  if (++call.rounds > maxRounds)
    return call.reject(
      new McpdError(
        "MCPD_INPUT_ROUNDS_EXCEEDED",
        `Server "${server}" answered ${call.method} with input_required more than ${maxRounds} times (mcpd.maxInputRounds); the call was given up`,
      ),
    );
  const state = typeof result.requestState === "string" ? result.requestState : undefined;
  const asks: [string, string, JsonObject | undefined][] = [];
  for (const [key, req] of Object.entries(isObject(result.inputRequests) ? result.inputRequests : {})) {
    const method = isObject(req) && typeof req.method === "string" ? req.method : "";
    const cap = INPUT_CAPABILITY[method];
    if (cap === undefined)
      return call.reject(
        new McpdError("MCPD_INTERNAL", `Server "${server}" asked for input mcpd cannot relay ("${key}": ${JSON.stringify(method)})`),
      );
    if (!declares(owner, cap))
      return call.reject(
        new McpdError(
          "MCPD_NO_CLIENT_FOR_REQUEST",
          `Server "${server}" needs input for ${call.method} (${method}), and this client (${owner.label}) did not declare the "${cap}" capability`,
        ),
      );
    const params = (req as JsonObject).params;
    asks.push([key, method, isObject(params) ? params : undefined]);
  }
  new InputRound(call, owner).run(asks, state);
}

/**
 * One round: the client's answers to every request of one `input_required`, gathered at once. While it
 * runs the call's cancellation points here (not upstream: no request is there), so a cancel, the call's
 * deadline or the client going away cancels the requests still waiting at the client and ends the call.
 */
class InputRound implements CancelById {
  private readonly asked: number[] = [];
  private done = false;

  constructor(
    private readonly call: RoundCall,
    private readonly owner: InputAsker,
  ) {}

  run(asks: [string, string, JsonObject | undefined][], state: string | undefined): void {
    const { call, owner } = this;
    if (call.cancellation.cancelled) return call.reject(call.cancellation.reason);
    call.cancellation.attach(this, 0);
    const answers = asks.map(([key, method, params]) =>
      owner.outgoing
        .request(method, owner.tag(call.handle, params), (id) => this.asked.push(id))
        .then((answer): [string, JsonObject] => [key, answer]),
    );
    Promise.all(answers).then(
      (pairs) => {
        if (!this.finish()) return;
        call.retry(Object.fromEntries(pairs), state);
      },
      (err: unknown) => {
        if (!this.finish()) return;
        this.cancelAsked("another request of the same call failed");
        call.reject(err);
      },
    );
  }

  /** The call was cancelled (by its client, its deadline, its connection's end) during the round. */
  cancel(_id: RequestId, reason: unknown): boolean {
    if (!this.finish()) return false;
    this.cancelAsked(reason instanceof Error ? reason.message : "cancelled");
    this.call.reject(reason);
    return true;
  }

  /** Ends the round once; false when it had already ended. */
  private finish(): boolean {
    if (this.done) return false;
    this.done = true;
    this.call.cancellation.detach();
    return true;
  }

  private cancelAsked(reason: string): void {
    for (const id of this.asked) this.owner.outgoing.cancel(id, reason);
  }
}
