import type { ServerResponse } from "node:http";
import type { HttpBuffers, HttpHolder } from "./http-buffers.js";

/**
 * The output of one HTTP response that its client has not read yet, charged to the daemon-wide budget
 * through {@link HttpBuffers}: recounted once per turn of the event loop it is written in (after the kernel
 * took what it would: a burst written in one turn to a client that reads is not taken for a client that
 * does not, as on the socket) and once what was written has left (an empty write's callback, queued behind
 * it), released when the response closes. When it holds the most of any client as the budget runs out,
 * the response is destroyed (after `onShed`, which says why). `onSent` is told whenever everything written
 * so far has left the daemon.
 */
export class OutputMeter implements HttpHolder {
  held = 0;
  private readonly res: ServerResponse;
  private readonly buffers: HttpBuffers;
  private readonly onShed: ((total: number, max: number) => void) | undefined;
  private readonly onSent: (() => void) | undefined;
  private watching = false;
  private scheduled = false;
  private stopped = false;
  private readonly flushed = (err?: Error | null): void => {
    this.watching = false;
    if (!err) this.recount();
  };
  private readonly afterTurn = (): void => {
    this.scheduled = false;
    this.recount();
  };

  /** @param onShed told before the response is destroyed over the budget (its owner forgets it, counts it) */
  constructor(res: ServerResponse, buffers: HttpBuffers, onShed?: (total: number, max: number) => void, onSent?: () => void) {
    this.res = res;
    this.buffers = buffers;
    this.onShed = onShed;
    this.onSent = onSent;
    res.once("close", () => this.stop());
  }

  /**
   * After a write (or `end()`): what waits for the reader is recounted at the end of this turn.
   * @returns the bytes waiting now
   */
  written(): number {
    if (this.stopped) return 0;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.afterTurn);
    }
    return this.res.writableLength;
  }

  /** Charges what waits for the reader now, and watches for it to leave. */
  private recount(): void {
    if (this.stopped) return;
    const res = this.res;
    const waiting = res.writableLength;
    this.buffers.set(this, waiting);
    if (waiting === 0) this.onSent?.();
    else if (!this.watching) {
      if (res.writableEnded) {
        this.watching = true;
        res.once("finish", () => this.stop());
      } else if (!res.destroyed) {
        this.watching = true;
        res.write("", this.flushed);
      }
    }
  }

  /** Stops counting (the response closed, or its owner let it go): its bytes are released. */
  stop(): void {
    this.stopped = true;
    this.buffers.set(this, 0);
  }

  shed(total: number, max: number): void {
    this.stop();
    this.buffers.dropped.overBudget++;
    this.onShed?.(total, max);
    this.res.destroy();
  }
}
