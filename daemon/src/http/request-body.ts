import type { IncomingMessage, ServerResponse } from "node:http";
import { WireCode, classify, type McpdErrorCode } from "@mcpd/protocol";
import { BodyChunks } from "./body-chunks.js";
import type { HttpBuffers, HttpHolder } from "./http-buffers.js";
import { sendError } from "./http-respond.js";

/** The bounds a request body is read within. */
export interface BodyLimits {
  /** Largest body, in bytes (`RUNTIME_DEFAULTS.maxMessageBytes`). */
  maxBytes: number;
  /** The whole body must arrive within this many ms of its headers (`mcpd.http.requestTimeoutMs`). */
  timeoutMs: number;
  /** The daemon-wide budget's HTTP account: a body is charged as it arrives. */
  buffers: HttpBuffers;
}

/** Why a body was not read: the HTTP status and the JSON-RPC error to answer with. */
interface BodyRefusal {
  status: number;
  code: number;
  mcpdCode: McpdErrorCode;
  message: string;
  /** The rest of the body is not read: the connection closes once the answer is sent. */
  close: boolean;
}

const tooLarge = (size: number, max: number, close: boolean): BodyRefusal => ({
  status: 413,
  code: WireCode.MessageTooLarge,
  mcpdCode: "MCPD_MESSAGE_TOO_LARGE",
  message: `Request body of ${size} bytes exceeds the limit of ${max} bytes`,
  close,
});

/**
 * One body being read: its chunks (body-chunks.ts), charged to the daemon-wide budget at what they take as
 * they arrive, and a deadline from its headers. Settles once: with the body, with a refusal (the caller answers it and the connection
 * closes: the rest of the body is never read), or with undefined when the client went away.
 */
class BodyRead implements HttpHolder {
  held = 0;
  private readonly chunks: BodyChunks;
  private readonly timer: NodeJS.Timeout;
  private done = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly limits: BodyLimits,
    private readonly settle: (outcome: Buffer | BodyRefusal | undefined) => void,
  ) {
    this.chunks = new BodyChunks(limits.buffers.bodyBlocks);
    this.timer = setTimeout(() => this.timedOut(), limits.timeoutMs);
    req.on("data", this.onData);
    req.once("end", () => this.finish(this.done ? undefined : this.chunks.toBuffer()));
    req.once("error", () => this.finish(undefined));
    req.once("close", () => this.finish(undefined));
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.done) return;
    const { maxBytes, buffers } = this.limits;
    const size = this.chunks.size + chunk.length;
    if (size > maxBytes) {
      buffers.dropped.bodyTooLarge++;
      return this.finish(tooLarge(size, maxBytes, true));
    }
    const copied = this.chunks.push(chunk);
    if (copied > 0) buffers.released(copied);
    // Charging may shed this very body (it holds the most): it is then settled already.
    buffers.set(this, this.chunks.cost);
  };

  private timedOut(): void {
    this.limits.buffers.dropped.bodyTimeout++;
    this.finish({
      status: 408,
      code: WireCode.LineTimeout,
      mcpdCode: "MCPD_HTTP_REQUEST_TIMEOUT",
      close: true,
      message:
        `Request Timeout: the body was not finished within ${this.limits.timeoutMs} ms of its headers ` +
        `(mcpd.http.requestTimeoutMs; ${this.chunks.size} bytes arrived)`,
    });
  }

  shed(total: number, max: number): void {
    this.limits.buffers.dropped.overBudget++;
    this.limits.buffers.log.warn(
      { heldBytes: this.held, bodyBytes: this.chunks.size, totalBytes: total, budgetBytes: max },
      "over the daemon-wide buffer budget; refusing the HTTP request body holding the most",
    );
    this.finish({
      status: 503,
      code: WireCode.BufferBudgetExceeded,
      mcpdCode: "MCPD_BUFFER_BUDGET_EXCEEDED",
      message:
        `Service Unavailable: mcpd holds ${total} bytes for its clients, over mcpd.maxBufferedBytesTotal (${max} bytes), ` +
        `and this request body held the most (${this.chunks.size} bytes so far); retry later`,
      close: true,
    });
  }

  private finish(outcome: Buffer | BodyRefusal | undefined): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.req.off("data", this.onData);
    if (!Buffer.isBuffer(outcome)) this.req.pause();
    // Garbage now: what the blocks' pool does not take back, and a body read once it is parsed.
    const garbage = this.chunks.clear() + (Buffer.isBuffer(outcome) ? outcome.length : 0);
    this.limits.buffers.set(this, 0, garbage);
    this.settle(outcome);
  }
}

/**
 * Reads a request body within `limits`: a declared `Content-Length` over the size is refused before
 * anything is read (413; the body is then read and dropped, within the request's deadline, so its client
 * gets the answer and may go on); one that grows past it as soon as it does (413), one holding the most
 * when the daemon-wide budget runs out (503) and one not finished in time (408) are answered with
 * `Connection: close`, and the rest of them is never read. A refusal is answered here and undefined
 * returned, as when the client went away.
 */
export async function readBody(req: IncomingMessage, res: ServerResponse, limits: BodyLimits): Promise<Buffer | undefined> {
  const declared = Number(req.headers["content-length"]);
  let outcome: Buffer | BodyRefusal | undefined;
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    limits.buffers.dropped.bodyTooLarge++;
    outcome = tooLarge(declared, limits.maxBytes, false);
  } else outcome = await new Promise((resolve) => new BodyRead(req, limits, resolve));
  if (outcome === undefined || Buffer.isBuffer(outcome)) return outcome;
  sendError(res, outcome.status, outcome.code, outcome.message, outcome.mcpdCode, outcome.close ? { connection: "close" } : undefined);
  return undefined;
}

/** A POST's JSON-RPC content: its messages, and whether they came as a batch. */
export interface PostedMessages {
  messages: unknown[];
  batch: boolean;
}

/**
 * Reads a POST's body (see {@link readBody}) as one JSON-RPC message or a batch of them. Anything else is
 * answered here, and undefined returned: 400 for JSON that does not parse (-32700), an empty batch, or a
 * value that is not a JSON-RPC 2.0 message.
 */
export async function readMessages(req: IncomingMessage, res: ServerResponse, limits: BodyLimits): Promise<PostedMessages | undefined> {
  const body = await readBody(req, res, limits);
  if (body === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch (err) {
    sendError(res, 400, WireCode.ParseError, `Parse error: ${(err as Error).message}`, "MCPD_PARSE_ERROR");
    return undefined;
  }
  const batch = Array.isArray(parsed);
  const messages: unknown[] = batch ? (parsed as unknown[]) : [parsed];
  const why =
    messages.length === 0
      ? "Invalid Request: an empty batch"
      : messages.some((m) => classify(m) === "invalid")
        ? "Invalid Request: not a JSON-RPC 2.0 message"
        : undefined;
  if (why) {
    sendError(res, 400, WireCode.InvalidRequest, why, "MCPD_PROTOCOL_VIOLATION");
    return undefined;
  }
  return { messages, batch };
}
