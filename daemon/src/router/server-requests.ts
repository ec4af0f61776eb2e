import {
  McpRemoteError,
  WireCode,
  mcpMethod,
  type JsonObject,
  type JsonRpcRequest,
  type Logger,
  type MessageContext,
} from "@mcpd/protocol";
import { configuredRoots } from "./configured-roots.js";
import type { HeldCalls } from "./held-calls.js";
import { INPUT_CAPABILITY as REQUEST_CAPABILITY } from "./input-rounds.js";
import type { ServerDirectory, Upstream } from "./upstream-port.js";
import { declares } from "./client-capabilities.js";
import { upstreamRequestKey } from "./upstream-keys.js";
import type { Session } from "./session.js";

/** {@link ServerRequests.holdFor}: the call is a 2026-era one whose method may not be answered `input_required`. */
const UNASKABLE = Symbol("unaskable");

/** Most candidate clients a refusal names. */
const MAX_NAMED_CLIENTS = 5;

/** The candidate clients of a refusal, by their labels (id and client name), at most {@link MAX_NAMED_CLIENTS}. */
function named(candidates: readonly Session[]): string {
  const more = candidates.length > MAX_NAMED_CLIENTS ? `, ... (${candidates.length} in all)` : "";
  return candidates
    .slice(0, MAX_NAMED_CLIENTS)
    .map((c) => c.label)
    .join(", ")
    .concat(more);
}

/**
 * Server-to-client requests (sampling, elicitation, roots): each goes to the one connection that caused
 * it, or mcpd answers itself. Keeps the requests relayed (so a server's cancellation reaches the client)
 * and, per shared server, a hint for status when one could not be routed.
 */
export class ServerRequests {
  /** {@link upstreamRequestKey} of the server's request -> the connection it was relayed to, and its id there. */
  private readonly relayed = new Map<string, { session: Session; downstreamId: number }>();
  /** Per shared server: why a server-to-client request could not be routed, and what to do (status). */
  private readonly hints = new Map<string, string>();

  constructor(
    private readonly servers: Pick<ServerDirectory, "get">,
    private readonly sessions: () => Iterable<Session>,
    private readonly log: Logger,
    private readonly held: HeldCalls,
  ) {}

  /** Requests relayed to a connection and not answered yet. */
  get size(): number {
    return this.relayed.size;
  }

  /** A connection ended: requests relayed to it are forgotten (they fail with it). */
  forget(session: Session): void {
    for (const [key, r] of this.relayed) if (r.session === session) this.relayed.delete(key);
  }

  /**
   * `notifications/cancelled` from a server: the request it relayed is cancelled at its client too; one
   * held for a 2026-era client's retry (held-calls.ts) is dropped there.
   */
  cancelled(handle: Upstream, params: JsonObject | undefined): void {
    const id = params?.requestId;
    const reason = typeof params?.reason === "string" ? params.reason : undefined;
    if (this.held.serverCancelled(handle, id, reason)) return;
    const route = id !== undefined ? this.relayed.get(upstreamRequestKey(handle, id)) : undefined;
    if (!route) return;
    // The client is told (notifications/cancelled) by the cancellation itself.
    route.session.outgoing.cancel(route.downstreamId, reason);
  }

  /**
   * The routing hint for a server's status, if one of its requests could not be routed (see
   * {@link noteAmbiguous}); none once the server is per-client.
   */
  hint(handle: Pick<Upstream, "name" | "config">): string | undefined {
    return handle.config.sharing === "per-client" ? undefined : this.hints.get(handle.name);
  }

  /**
   * The connections that may have caused a server-to-client request from `handle`: a private session's
   * owner; on Streamable HTTP, when the request arrived on the response stream of one upstream request,
   * the connection that sent that request; otherwise (stdio, and HTTP's standalone GET stream) every
   * connection with requests in flight to it. Who declared which capability plays no part here:
   * narrowing by capability first would hand one agent's request to a bystander.
   *
   * The standalone stream is not ruled out: the specification says what it carries is unrelated to any
   * running request, yet servers in the wild (the conformance suite's own reference server among them)
   * send a tool call's sampling and elicitation there; with one client calling, mcpd then knows no less
   * than over stdio, where the same request goes to that client.
   */
  private candidatesFor(handle: Upstream, ctx: MessageContext): Session[] {
    // A shared server's UI session (a second shared session) follows the shared rules, not a private one's.
    const isPrivate = handle !== this.servers.get(handle.name) && handle.config.sharing === "per-client";
    const related = ctx.relatedRequestId;
    const out: Session[] = [];
    for (const s of this.sessions()) {
      if (
        isPrivate
          ? s.privates?.has(handle) === true
          : related !== undefined
            ? s.inFlight.hasUpstreamRequest(handle, related)
            : s.inFlight.hasInFlightTo(handle)
      )
        out.push(s);
    }
    return out;
  }

  /**
   * Sends a server-to-client request to the one connection that caused it (see {@link candidatesFor}),
   * only when there is exactly one candidate and it declared the capability the request needs. Otherwise
   * mcpd answers itself: `roots/list` with the server's configured roots, anything else with -32066
   * saying why. It never guesses.
   */
  async request(handle: Upstream, req: JsonRpcRequest, ctx: MessageContext): Promise<JsonObject> {
    const cap = REQUEST_CAPABILITY[req.method];
    const candidates = this.candidatesFor(handle, ctx);
    const only = candidates.length === 1 ? (candidates[0] as Session) : undefined;
    const held = only?.modern !== undefined ? this.holdFor(only, handle, req, ctx, cap) : undefined;
    if (held !== undefined && held !== UNASKABLE) return held;
    if (only && held === undefined && (!cap || declares(only, cap))) {
      const key = upstreamRequestKey(handle, req.id);
      try {
        return await only.outgoing.request(req.method, only.tag(handle, req.params), (id) =>
          this.relayed.set(key, { session: only, downstreamId: id }),
        );
      } finally {
        this.relayed.delete(key);
      }
    }
    if (candidates.length > 1) this.noteAmbiguous(handle, req.method, candidates.length);
    if (req.method === "roots/list") {
      return configuredRoots(handle);
    }
    const why =
      held === UNASKABLE
        ? "the 2026-era request it came during cannot be answered input_required (only tools/call, prompts/get and resources/read can)"
        : only
          ? `the only client with a request in flight to it (${only.label}) did not declare the "${cap}" capability`
          : candidates.length === 0
            ? ctx.relatedRequestId !== undefined
              ? "it arrived with a request that no connected client is waiting for"
              : ctx.standalone
                ? "it arrived on the server's standalone stream and no client has a request in flight to it"
                : "no client has a request in flight to it"
            : `${candidates.length} clients have requests in flight to it (${named(candidates)}), so mcpd cannot tell which one it is for; ` +
              `set "sharing": "per-client" on this server to give each client its own session`;
    throw new McpRemoteError({
      code: WireCode.NoClientForRequest,
      message: `No single client can answer ${req.method} for server "${handle.name}": ${why}`,
      data: { mcpdCode: "MCPD_NO_CLIENT_FOR_REQUEST" },
    });
  }

  /**
   * A 2026-era call of `session` that the request is for (the one on whose HTTP response stream it came,
   * else its one call in flight to the server): it is answered `input_required` and held for its retry
   * (held-calls.ts). Several calls: -32066, never a guess. Undefined: no 2026-era call (or one whose client
   * did not declare the capability), which the 2025 rules then serve. {@link UNASKABLE}: the 2026-era call
   * is of a method the 2026-07-28 revision lets no `input_required` answer (a list, `completion/complete`):
   * its client cannot be asked, and mcpd answers as for a client without the capability.
   */
  private holdFor(
    session: Session,
    handle: Upstream,
    req: JsonRpcRequest,
    ctx: MessageContext,
    cap: string | undefined,
  ): Promise<JsonObject> | typeof UNASKABLE | undefined {
    const modern = session.modern;
    const calls = session.inFlight.callsTo(handle, ctx.relatedRequestId);
    if (modern === undefined || !calls.some((c) => modern.has(c.id))) return undefined;
    if (calls.length > 1)
      throw new McpRemoteError({
        code: WireCode.NoClientForRequest,
        message: `No single call can answer ${req.method} for server "${handle.name}": ${session.label} has ${calls.length} calls in flight to it`,
        data: { mcpdCode: "MCPD_NO_CLIENT_FOR_REQUEST" },
      });
    const call = calls[0] as (typeof calls)[number];
    if (mcpMethod(call.method)?.inputRequired !== true) return UNASKABLE;
    if (cap !== undefined && !modern.declared(call.id, cap)) return undefined;
    return this.held.hold(session, call, req);
  }

  /** A shared server asked while several clients were calling it: keep (and log, once) a hint for status. */
  private noteAmbiguous(handle: Upstream, method: string, clients: number): void {
    if (this.hints.has(handle.name)) return;
    const hint =
      `${method} from this server arrived while ${clients} clients had requests in flight to it, so mcpd could not route it` +
      `${method === "roots/list" ? " (answered with the configured roots)" : " and refused it"}; ` +
      `to use sampling, elicitation or per-agent roots with several agents at once, give this server "sharing": "per-client"`;
    this.hints.set(handle.name, hint);
    this.log.warn({ server: handle.name, hint }, "server-to-client request could not be routed");
  }
}
