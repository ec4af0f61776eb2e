import { JsonRpcPeer, McpdError, WireCode, type JsonObject } from "@mcpd/protocol";

/**
 * The requests mcpd sends one client on a server's behalf (sampling, elicitation, roots), waiting for
 * their answers. The bookkeeping (ids numbered per connection, the deadline, cancellation by id with
 * `notifications/cancelled` to the client, failing everything when the client goes away) is the
 * JSON-RPC peer's, as on every transport and in the client SDK; this class only says where messages go.
 */
export class OutgoingRequests {
  /**
   * Made by the first request: most clients are never asked anything, and a peer with its tables and
   * closures costs ~1 KB per connection (1 MB of the daemon's heap with 1,000 clients).
   */
  private peer: JsonRpcPeer | undefined;

  /**
   * @param timeoutMs how long the client has to answer, in ms (then RequestTimeoutError, and the client is
   *   told with `notifications/cancelled`)
   * @param send queues one message to the client; false when the connection is gone or over its bound
   */
  constructor(
    private readonly timeoutMs: number,
    private readonly send: (message: object) => boolean,
  ) {}

  /** Whether the peer exists (a request was ever sent to this client). */
  get allocated(): boolean {
    return this.peer !== undefined;
  }

  private newPeer(): JsonRpcPeer {
    const send = this.send;
    return new JsonRpcPeer({
      defaultTimeoutMs: this.timeoutMs,
      sink: {
        send(message) {
          // The server is answered at once rather than after the deadline: this client cannot answer.
          if (!send(message))
            throw new McpdError("MCPD_CONNECTION_LOST", "Client connection is closed or not reading", {
              wireCode: WireCode.UpstreamClosed,
            });
        },
      },
    });
  }

  /** Sends `method` to the client; `onRequestId` learns its id (for the server's cancellation) before it is sent. */
  request(method: string, params: JsonObject | undefined, onRequestId: (id: number) => void): Promise<JsonObject> {
    this.peer ??= this.newPeer();
    return this.peer.request(method, params, { onRequestId: (id) => onRequestId(id as number) });
  }

  /** A response from the client; one for no request of ours is ignored. */
  answer(msg: JsonObject): void {
    this.peer?.receive(msg);
  }

  /**
   * The server cancelled it: it fails with MCPD_ABORTED and the client gets `notifications/cancelled`.
   * False when no such request is waiting.
   */
  cancel(id: number, reason: string | undefined): boolean {
    return this.peer?.cancel(id, new McpdError("MCPD_ABORTED", reason ?? "cancelled by server")) ?? false;
  }

  /**
   * The client went away: every waiting request fails with MCPD_CONNECTION_LOST. (A request after this
   * fails the same way: `send` refuses it.)
   */
  failAll(reason: string): void {
    this.peer?.close(() => new McpdError("MCPD_CONNECTION_LOST", `Client disconnected: ${reason}`, { wireCode: WireCode.UpstreamClosed }));
  }
}
