import { PROTOCOL_DEFAULTS, quote } from "@mcpd/protocol";
import type { JsonObject, Logger } from "@mcpd/protocol";
import type { Upstream } from "./upstream-port.js";
import type { Downstream, ProgressRegistry, ProgressTarget } from "./ports.js";

/**
 * A daemon-unique progress token upstream, mapped back to the caller's own token. It is valid only for
 * progress from the upstream session the request went to (`entry.handle`).
 */
interface ProgressRoute {
  owner: Downstream;
  /** The caller's own token; undefined: the request that took it over asked for no progress. */
  token: string | number | undefined;
  entry: ProgressTarget;
}

/**
 * Progress tokens of every connection. Two agents may use the same token at once, so each request's
 * token is replaced upstream by one unique in the daemon (`mcpd-p<n>`); progress carrying it goes back to
 * the request's connection with the token it chose, and restarts that request's timeout.
 */
export class ProgressRoutes implements ProgressRegistry {
  private readonly routes = new Map<string, ProgressRoute>();
  private counter = 0;
  /** Progress notifications dropped: a token never issued, already released, or issued to another upstream. */
  private droppedCount = 0;
  /** Servers that warned about it once already, so a misbehaving server cannot flood the log. */
  private readonly warned = new Set<string>();

  constructor(private readonly log: Logger) {}

  /** Tokens issued and not yet released. */
  get size(): number {
    return this.routes.size;
  }

  /** Progress notifications dropped so far. */
  get dropped(): number {
    return this.droppedCount;
  }

  register(owner: Downstream, token: string | number, entry: ProgressTarget): string {
    const upstream = `mcpd-p${++this.counter}`;
    this.routes.set(upstream, { owner, token, entry });
    return upstream;
  }

  release(upstreamToken: string): void {
    this.routes.delete(upstreamToken);
  }

  move(upstreamToken: string, owner: Downstream, token: string | number | undefined): void {
    const route = this.routes.get(upstreamToken);
    if (route === undefined) return;
    route.owner = owner;
    route.token = token;
  }

  /** `notifications/progress` from `handle`: to the connection whose request it is for, or dropped. */
  deliver(handle: Upstream, method: string, params: JsonObject | undefined): void {
    const token = params?.progressToken;
    const route = typeof token === "string" ? this.routes.get(token) : undefined;
    // A token we never issued, or issued for a request to another server (or another client's private
    // session): never invent progress for anyone, and never let one server extend another's timeout.
    if (!route || route.entry.handle !== handle) {
      this.drop(handle, token);
      return;
    }
    route.entry.touch();
    if (route.token === undefined) return;
    route.owner.send({ jsonrpc: "2.0", method, params: { ...params, progressToken: route.token } });
  }

  private drop(handle: Upstream, token: unknown): void {
    this.droppedCount++;
    if (this.warned.has(handle.name)) return;
    this.warned.add(handle.name);
    const shown =
      typeof token === "string" ? quote(token, PROTOCOL_DEFAULTS.quotedNameChars) : typeof token === "number" ? token : typeof token;
    this.log.warn(
      { server: handle.name, token: shown },
      "dropped progress for a token this server was not given or whose request has ended (further ones are only counted)",
    );
  }
}
