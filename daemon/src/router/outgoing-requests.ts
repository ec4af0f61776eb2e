import { JsonRpcPeer, McpdError, WireCode, type JsonObject } from "@mcpd/protocol";

/**
 * The requests mcpd sends one client on a server's behalf (sampling, elicitation, roots), waiting for
 * their answers. The bookkeeping (ids numbered per connection, the deadline, cancellation by id with
 * `notifications/cancelled` to the client, failing everything when the client goes away) is the
 * JSON-RPC peer's, as on every transport and in the client SDK; this class only says where messages go.
 */
export class OutgoingRequests {
  private readonly peer: JsonRpcPeer;

  /**
   * @param timeoutMs how long the client has to answer, in ms (then RequestTimeoutError, and the client is
   *   told with `notifications/cancelled`)
   * @param send queues one message to the client; false when the connection is gone or over its bound
   */
  constructor(timeoutMs: number, send: (message: object) => boolean) {
    this.peer = new JsonRpcPeer({
      defaultTimeoutMs: timeoutMs,
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
    return this.peer.request(method, params, { onRequestId: (id) => onRequestId(id as number) });
  }

  /** A response from the client; one for no request of ours is ignored. */
  answer(msg: JsonObject): void {
    this.peer.receive(msg);
  }

  /**
   * The server cancelled it: it fails with MCPD_ABORTED and the client gets `notifications/cancelled`.
   * False when no such request is waiting.
   */
  cancel(id: number, reason: string | undefined): boolean {
    return this.peer.cancel(id, new McpdError("MCPD_ABORTED", reason ?? "cancelled by server"));
  }

  /** The client went away: every waiting request fails with MCPD_CONNECTION_LOST. */
  failAll(reason: string): void {
    this.peer.close(() => new McpdError("MCPD_CONNECTION_LOST", `Client disconnected: ${reason}`, { wireCode: WireCode.UpstreamClosed }));
  }
}
