import { McpdError, RequestTimeoutError, WireCode, fromWireError, isObject, type JsonObject, type JsonRpcErrorObject } from "@mcpd/protocol";

interface Pending {
  resolve: (v: JsonObject) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * The requests mcpd sends one client on a server's behalf (sampling, elicitation, roots), waiting for
 * their answers: numbered per connection, bounded by a deadline, failed when the client goes away.
 */
export class OutgoingRequests {
  private readonly pending = new Map<number, Pending>();
  private lastId = 0;

  /** @param timeoutMs how long the client has to answer, in ms */
  constructor(private readonly timeoutMs: number) {}

  /** A new request id and the answer to wait for (RequestTimeoutError after `timeoutMs`). */
  start(): { id: number; result: Promise<JsonObject> } {
    const id = ++this.lastId;
    const result = new Promise<JsonObject>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RequestTimeoutError(this.timeoutMs));
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
    });
    return { id, result };
  }

  /** A response from the client; one for no request of ours (or a string id) is ignored. */
  answer(msg: JsonObject): void {
    const id = msg.id;
    if (typeof id !== "number") return;
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    clearTimeout(pending.timer);
    if (isObject(msg.error)) pending.reject(fromWireError(msg.error as unknown as JsonRpcErrorObject));
    else pending.resolve((isObject(msg.result) ? msg.result : {}) as JsonObject);
  }

  /** The server cancelled it: fails with MCPD_ABORTED. False when no such request is waiting. */
  cancel(id: number, reason: string | undefined): boolean {
    const pending = this.pending.get(id);
    if (!pending) return false;
    this.pending.delete(id);
    clearTimeout(pending.timer);
    pending.reject(new McpdError("MCPD_ABORTED", reason ?? "cancelled by server"));
    return true;
  }

  /** The client went away: every waiting request fails with MCPD_CONNECTION_LOST. */
  failAll(reason: string): void {
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new McpdError("MCPD_CONNECTION_LOST", `Client disconnected: ${reason}`, { wireCode: WireCode.UpstreamClosed }));
    }
    this.pending.clear();
  }
}
