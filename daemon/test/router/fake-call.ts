/**
 * One request a fake server received (fake-upstream.ts), and the test's hold on its answer: answer it,
 * fail it, send progress for it, or ask the client something on its reply stream.
 */
import { McpRemoteError, type JsonObject, type JsonRpcErrorObject, type MessageContext, type RequestReply } from "@mcpd/protocol";

/** What a call needs of the fake server it was sent to. */
export interface CallHost {
  /** Its calls not settled yet. */
  readonly pending: Set<FakeCall>;
  sendNotification(method: string, params?: JsonObject, context?: MessageContext): void;
  sendRequest(method: string, params?: JsonObject, context?: MessageContext): Promise<JsonObject>;
}

/** One request the fake server received, and the script's hold on its answer. */
export class FakeCall {
  settled = false;
  /** The reason the router cancelled it with (its cancellation, a deadline, the client leaving). */
  cancelled: unknown;

  constructor(
    readonly upstream: CallHost,
    /** The id the fake gave it (the router's upstream id). */
    readonly id: number,
    readonly method: string,
    readonly params: JsonObject | undefined,
    private readonly reply: RequestReply<JsonObject>,
  ) {}

  /** The progress token the server was given (the router's daemon-unique one). */
  get progressToken(): string | number | undefined {
    const meta = this.params?._meta as JsonObject | undefined;
    const token = meta?.progressToken;
    return typeof token === "string" || typeof token === "number" ? token : undefined;
  }

  answer(result: JsonObject): void {
    if (this.end()) this.reply.resolve(result);
  }

  /** Answers with a JSON-RPC error (as the server would), or rejects with `error` as the transport would. */
  fail(error: JsonRpcErrorObject | Error): void {
    if (this.end()) this.reply.reject(error instanceof Error ? error : new McpRemoteError(error));
  }

  /** Sends `notifications/progress` for this call, under the token it was given. */
  progress(progress: number, total?: number): void {
    this.upstream.sendNotification(
      "notifications/progress",
      { progressToken: this.progressToken ?? null, progress, ...(total === undefined ? {} : { total }) },
      { relatedRequestId: this.id },
    );
  }

  /** A server-to-client request sent on this call's reply stream (as Streamable HTTP does). */
  ask(method: string, params?: JsonObject): Promise<JsonObject> {
    return this.upstream.sendRequest(method, params, { relatedRequestId: this.id });
  }

  /** Settles it (false when it was settled already). */
  end(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.upstream.pending.delete(this);
    return true;
  }
}
