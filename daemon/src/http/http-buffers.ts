import type { HttpFrontDropped, Logger } from "@mcpd/protocol";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import type { BudgetAccount, BufferBudget } from "../infra/buffer-budget.js";
import { BodyBlocks } from "./body-blocks.js";

/**
 * One thing of the HTTP front end that holds bytes for a client: a response's output not yet read
 * (output-meter.ts), a request body still arriving (request-body.ts), a session's SSE events kept for
 * resumption (streamable-session.ts).
 */
export interface HttpHolder {
  /** Bytes it holds, as last charged; only {@link HttpBuffers.set} changes it. */
  held: number;
  /**
   * It holds the most of any client when the daemon-wide budget ran out: it closes (a response, a body)
   * or trims (kept events), releasing its bytes through {@link HttpBuffers.set} before it returns.
   * `total` and `max` are the budget's figures, for its error and log line.
   */
  shed(total: number, max: number): void;
}

/**
 * The HTTP front end's account in the daemon-wide {@link BufferBudget} (`mcpd.maxBufferedBytesTotal`),
 * shared with the socket server: every holder's bytes are charged by deltas as they change, and when the
 * budget runs out and an HTTP holder holds the most of any client, that holder is shed. Holders with
 * nothing held are not tracked, so the scan for the largest only sees those holding bytes.
 */
export class HttpBuffers implements BudgetAccount {
  private readonly holders = new Set<HttpHolder>();
  private total = 0;
  readonly budget: BufferBudget;
  readonly log: Logger;
  /** What the front end's bounds dropped, for `mcpd/status`. */
  readonly dropped: HttpFrontDropped = {
    overBudget: 0,
    replayTrims: 0,
    droppedEvents: 0,
    bodyTooLarge: 0,
    bodyTimeout: 0,
    tooManyRequests: 0,
  };
  /** Told of bytes let go, now garbage (a GarbagePacer's `release`): bodies read or refused, output written, kept events trimmed. */
  released: (bytes: number) => void = () => {};
  /** The blocks request bodies are kept in, reused from body to body (body-blocks.ts). */
  readonly bodyBlocks = new BodyBlocks({
    blockBytes: RUNTIME_DEFAULTS.httpBodyBlockBytes,
    maxIdle: RUNTIME_DEFAULTS.httpBodyBlocksIdle,
    idleMs: RUNTIME_DEFAULTS.httpBodyBlocksIdleMs,
    released: (bytes) => this.released(bytes),
  });

  constructor(budget: BufferBudget, log: Logger) {
    this.budget = budget;
    this.log = log;
    budget.add(this);
  }

  /** Bytes the front end holds for its clients now (bodies, unread output, kept events). */
  get bytes(): number {
    return this.total;
  }

  /**
   * `holder` now holds `bytes`: the difference is charged to (or released from) the budget. Bytes released
   * are told to {@link released} as garbage, or only `garbage` of them (the rest is reused: body blocks).
   */
  set(holder: HttpHolder, bytes: number, garbage?: number): void {
    const delta = bytes - holder.held;
    if (delta === 0) return;
    holder.held = bytes;
    if (bytes > 0) this.holders.add(holder);
    else this.holders.delete(holder);
    this.total += delta;
    this.budget.charge(delta);
    if (delta < 0 && (garbage ?? -delta) > 0) this.released(garbage ?? -delta);
  }

  largestHolder(): number {
    return this.holdingMost()?.held ?? 0;
  }

  shedLargest(total: number, max: number): void {
    this.holdingMost()?.shed(total, max);
  }

  private holdingMost(): HttpHolder | undefined {
    let most: HttpHolder | undefined;
    for (const h of this.holders) if (!most || h.held > most.held) most = h;
    return most;
  }
}
