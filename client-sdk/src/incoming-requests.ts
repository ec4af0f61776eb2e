import { toWireError, WireCode, type JsonObject, type RequestId } from "@mcpd/protocol/core";
import { CLIENT_DEFAULTS } from "./defaults.js";
import type { SocketConnection } from "./socket-connection.js";
import type { RequestHandler } from "./types.js";

interface Active {
  controller: AbortController;
}

/**
 * Server-to-client requests relayed by the daemon (`sampling/createMessage`, `elicitation/create`,
 * `roots/list`, ...): dispatch to the registered handler, answer on the connection they came from,
 * abort the handler on `notifications/cancelled` or when that connection drops. `ping` is answered here.
 */
export class IncomingRequests {
  /** Handlers by method. */
  readonly handlers = new Map<string, RequestHandler>();
  private readonly active = new Map<RequestId, Active>();

  constructor(private readonly maxActive: number = CLIENT_DEFAULTS.maxIncomingRequests) {}

  /** Handles one request; the answer (or error) is sent on `conn`, never on a later connection. */
  handle(conn: SocketConnection, id: RequestId, method: string, params: JsonObject | undefined, server: string | undefined): void {
    if (method === "ping") {
      conn.respond(id, {});
      return;
    }
    const handler = this.handlers.get(method);
    if (!handler) {
      conn.respondError(id, {
        code: WireCode.MethodNotFound,
        message: `Method not found: ${method} (no handler registered with setRequestHandler)`,
      });
      return;
    }
    if (this.active.size >= this.maxActive) {
      conn.respondError(id, { code: WireCode.TooManyRequests, message: `Too many requests in flight (${this.maxActive})` });
      return;
    }
    const controller = new AbortController();
    const entry: Active = { controller };
    this.active.set(id, entry);
    const done = (): boolean => {
      if (this.active.get(id) === entry) this.active.delete(id);
      // MCP: a cancelled request gets no answer.
      return !controller.signal.aborted;
    };
    let result: Promise<JsonObject>;
    try {
      result = Promise.resolve(handler(params ?? {}, { method, server, requestId: id, signal: controller.signal }));
    } catch (err) {
      result = Promise.reject(err);
    }
    result.then(
      (value) => {
        if (done()) conn.respond(id, typeof value === "object" && value !== null ? value : {});
      },
      (err: unknown) => {
        if (done()) conn.respondError(id, toWireError(err));
      },
    );
  }

  /**
   * `notifications/cancelled`: aborts that request's handler. Ids are the current connection's: the
   * entries of a dropped connection are cleared by {@link abortAll} before a new one exists.
   */
  cancel(requestId: unknown, reason: unknown): void {
    if (typeof requestId !== "string" && typeof requestId !== "number") return;
    const entry = this.active.get(requestId);
    if (!entry) return;
    this.active.delete(requestId);
    entry.controller.abort(typeof reason === "string" ? new Error(reason) : new Error("Cancelled by the server"));
  }

  /** The connection dropped: abort every handler still running for it. */
  abortAll(reason: Error): void {
    for (const entry of this.active.values()) entry.controller.abort(reason);
    this.active.clear();
  }
}
