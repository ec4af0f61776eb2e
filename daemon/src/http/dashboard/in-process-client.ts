import { McpRemoteError, McpdError, type ClientFace, type JsonObject, type JsonRpcErrorObject } from "@mcpd/protocol";
import type { Router } from "../../router/router.js";
import type { Session } from "../../router/session.js";

interface Pending {
  resolve(result: JsonObject): void;
  reject(err: Error): void;
}

/**
 * A downstream session of the router driven from inside the daemon: the dashboard's control connection
 * (its actions go through the same control handlers as `mcpd restart`), and the session that runs "try a
 * tool" like any agent's. Its messages are objects handed to the session; no socket, no serialisation.
 */
export class InProcessClient {
  private readonly session: Session;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly router: Router,
    face: ClientFace = "http",
  ) {
    this.session = router.attach({ send: (m) => this.receive(m as JsonObject) }, face);
  }

  /**
   * Sends request `method` and resolves with its result.
   * @throws McpRemoteError with the session's error object; McpdError MCPD_TRANSPORT_CLOSED once closed.
   */
  request(method: string, params?: JsonObject): Promise<JsonObject> {
    if (this.closed) return Promise.reject(new McpdError("MCPD_TRANSPORT_CLOSED", "Transport closed"));
    const id = this.nextId++;
    return new Promise<JsonObject>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.session.handle({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    });
  }

  /** Sends notification `method`. */
  notify(method: string, params?: JsonObject): void {
    if (!this.closed) this.session.handle({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });
  }

  /** Ends the session (its in-flight requests are cancelled upstream) and fails what still waits here. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const p of this.pending.values()) p.reject(new McpdError("MCPD_TRANSPORT_CLOSED", "Transport closed"));
    this.pending.clear();
    await this.router.detach(this.session);
  }

  private receive(message: JsonObject): boolean {
    const id = message.id;
    const p = typeof id === "number" ? this.pending.get(id) : undefined;
    if (p === undefined) return true;
    this.pending.delete(id as number);
    const error = message.error as JsonRpcErrorObject | undefined;
    if (error === undefined) p.resolve((message.result ?? {}) as JsonObject);
    else p.reject(new McpRemoteError(error));
    return true;
  }
}
