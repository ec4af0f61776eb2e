/**
 * A client of an in-memory router: one router {@link Session} whose outgoing messages land in `received`
 * (copied, as a socket would serialize them), with promises for the answers and messages a test waits for.
 * Nothing polls: a wait settles when the message arrives, or fails after a bound naming what was awaited.
 */
import type { JsonObject, JsonRpcErrorObject, RequestId } from "@mcpd/protocol";
import type { Router } from "../../src/router/router.js";
import type { Session } from "../../src/router/session.js";

/** A message as a test reads it. */
export type Message = Record<string, any>;

/** How long a wait for a message may take before it fails (in-memory, it takes microseconds). */
const WAIT_BOUND_MS = 10_000;

const isResponse = (m: Message): boolean => m.method === undefined && m.id !== undefined;

/** What a client answers a server-to-client request with: a result, an error, or nothing (left unanswered). */
export type RequestAnswer = { result: JsonObject } | { error: JsonRpcErrorObject } | undefined;

export class MemoryClient {
  readonly session: Session;
  /** Every message the router sent it, in order. */
  readonly received: Message[] = [];
  /** Messages handed to it after it disconnected: must stay 0. */
  afterClose = 0;
  closed = false;
  /** Answers the server-to-client requests it gets (sampling, elicitation, roots); default: none. */
  onRequest: ((request: Message) => RequestAnswer) | undefined;
  private readonly waiters = new Set<{ match: (m: Message) => boolean; resolve: (m: Message) => void }>();
  private nextId = 0;

  constructor(private readonly router: Router) {
    this.session = router.attach({ send: (message) => this.deliver(message) });
  }

  private deliver(message: object): boolean {
    if (this.closed) {
      this.afterClose++;
      return false;
    }
    const m = JSON.parse(JSON.stringify(message)) as Message;
    this.received.push(m);
    for (const w of [...this.waiters]) {
      if (!w.match(m)) continue;
      this.waiters.delete(w);
      w.resolve(m);
    }
    if (m.method !== undefined && m.id !== undefined && this.onRequest) {
      const answer = this.onRequest(m);
      // Answered after the router finished sending it, as over a socket.
      if (answer) queueMicrotask(() => this.send({ jsonrpc: "2.0", id: m.id, ...answer }));
    }
    return true;
  }

  /** Hands the router one message from this client. */
  send(message: object): void {
    this.session.handle(message);
  }

  /** Sends a request and resolves with its answer (result or error); `id` defaults to a fresh number. */
  request(method: string, params?: JsonObject, id: RequestId = ++this.nextId): Promise<Message> {
    const answer = this.next((m) => isResponse(m) && m.id === id, `the answer to ${method} id ${JSON.stringify(id)}`);
    this.send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    return answer;
  }

  /** `tools/call` of `name`; resolves with its answer. */
  call(name: string, args: JsonObject = {}, id?: RequestId, meta?: JsonObject): Promise<Message> {
    return this.request("tools/call", { name, arguments: args, ...(meta ? { _meta: meta } : {}) }, id);
  }

  /** Sends a `tools/call` without waiting for its answer (one the test expects never to come). */
  sendCall(name: string, id: RequestId, args: JsonObject = {}, meta?: JsonObject): void {
    this.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } });
  }

  notify(method: string, params?: JsonObject): void {
    this.send({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });
  }

  /** `notifications/cancelled` for one of its requests. */
  cancel(id: RequestId, reason = "cancelled by the test"): void {
    this.notify("notifications/cancelled", { requestId: id, reason });
  }

  /** The next message from now on that `match` accepts. */
  next(match: (m: Message) => boolean, what: string): Promise<Message> {
    return new Promise((resolve, reject) => {
      const w = { match, resolve };
      this.waiters.add(w);
      setTimeout(() => {
        if (!this.closed && this.waiters.delete(w))
          reject(new Error(`no ${what} within ${WAIT_BOUND_MS} ms; received: ${JSON.stringify(this.received)}`));
      }, WAIT_BOUND_MS).unref();
    });
  }

  /** The first message, received already or from now on, that `match` accepts. */
  waitFor(match: (m: Message) => boolean, what: string): Promise<Message> {
    const seen = this.received.find(match);
    return seen ? Promise.resolve(seen) : this.next(match, what);
  }

  /** A ping's answer: everything the router would send this client before it has been sent by then. */
  async marker(): Promise<void> {
    await this.request("ping", undefined, `marker-${++this.nextId}`);
  }

  /** The notifications received of `method` (every notification without it). */
  notifications(method?: string): Message[] {
    return this.received.filter((m) => m.id === undefined && m.method !== undefined && (method === undefined || m.method === method));
  }

  /** The answers received to `id`. */
  answers(id: RequestId): Message[] {
    return this.received.filter((m) => isResponse(m) && m.id === id);
  }

  /** The server-to-client requests received. */
  requests(): Message[] {
    return this.received.filter((m) => m.id !== undefined && m.method !== undefined);
  }

  /** The connection ends (the router cancels its requests and forgets it). */
  async disconnect(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // What it still waited for will never come: those waits end with the connection, unsettled.
    this.waiters.clear();
    await this.router.detach(this.session);
  }
}
