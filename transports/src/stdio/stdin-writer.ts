import type { Writable } from "node:stream";
import { MessageTooLargeError, QueueFullError, TickBatch } from "@mcpd/protocol";

/**
 * A tick's lines are written at once when they reach this many characters (or the stream's high-water
 * mark, if lower): a burst learns of backpressure within its tick, as it did line by line.
 */
const BATCH_FLUSH_CHARS = 64 * 1024;

/**
 * Bounded, backpressure-aware writer of encoded lines to a child's stdin.
 *
 * While the stream accepts data, the lines of one tick go to `stream.write()` together at its end (or at
 * once when they reach the stream's high-water mark, at most 64 KiB). Once it returns false, later lines
 * wait here until 'drain' and are then written in one call. The bytes waiting (ours plus the stream's own
 * buffer) never exceed `maxPendingBytes`: a line that would pass it is refused with
 * QueueFullError (MCPD_QUEUE_FULL), a line larger than the bound on its own with MessageTooLargeError.
 * Never writes after {@link discard}.
 */
export class StdinWriter {
  private waitingDrain = false;
  private queue: string[] = [];
  private queuedBytes = 0;
  private discarded = false;
  private waiter: { promise: Promise<void>; resolve: () => void; reject: (err: Error) => void } | undefined;

  /**
   * @param stream the child's stdin (error listeners are the owner's job)
   * @param maxPendingBytes bound on bytes waiting for 'drain'
   * @param label names the stream in error messages, e.g. `stdin of "npx"`
   */
  constructor(
    private readonly stream: Writable,
    private readonly maxPendingBytes: number,
    private readonly label: string,
  ) {
    stream.on("drain", () => this.flush());
    this.flushChars = Math.min(BATCH_FLUSH_CHARS, Math.max(1, stream.writableHighWaterMark));
  }

  /** Characters of this tick's lines that are written at once, not at the end of the tick. */
  private readonly flushChars: number;

  /**
   * Every line written in this tick, written in one call at its end: one syscall per burst instead of one
   * per message was half the daemon's CPU per relayed call, and one string instead of a corked writev of
   * each another ~0.6 µs per message (docs/benchmarks.md).
   */
  private readonly batch = new TickBatch((text) => {
    if (!this.discarded && !this.stream.write(text)) this.waitingDrain = true;
  }, process.nextTick);

  /** True between a `write()` that returned false and the next 'drain'. */
  get waiting(): boolean {
    return this.waitingDrain;
  }

  /** Bytes not yet taken by the child: queued here plus buffered in the stream (this tick's lines counted by characters). */
  get pendingBytes(): number {
    return this.queuedBytes + this.stream.writableLength + this.batch.length;
  }

  /** Writes or queues one line. Throws QueueFullError / MessageTooLargeError; nothing is written then. */
  write(line: string): void {
    const max = this.maxPendingBytes;
    // UTF-16 length <= UTF-8 bytes <= 3 x length: measure exactly only when the line could be too big.
    if (line.length * 3 > max) {
      const size = Buffer.byteLength(line);
      if (size > max) throw new MessageTooLargeError(size, max, "Message");
    }
    if (!this.waitingDrain) {
      this.batch.add(line);
      if (this.batch.length >= this.flushChars) this.batch.flush();
      return;
    }
    const size = Buffer.byteLength(line);
    const pending = this.queuedBytes + this.stream.writableLength;
    if (pending + size > max) {
      throw new QueueFullError(
        `${this.label} is not being read fast enough: ${pending} bytes wait for drain, limit ${max} bytes (maxPendingWriteBytes)`,
      );
    }
    this.queue.push(line);
    this.queuedBytes += size;
  }

  /**
   * Resolves at the next 'drain' (once what waited has been handed to the stream); at once when not
   * waiting. Rejects with the error given to {@link discard}.
   */
  flushed(): Promise<void> {
    if (!this.waitingDrain) return Promise.resolve();
    if (!this.waiter) {
      let resolve!: () => void;
      let reject!: (err: Error) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.waiter = { promise, resolve, reject };
    }
    return this.waiter.promise;
  }

  /**
   * Drops everything queued for 'drain', fails flush waiters with `err`, and never writes again. This
   * tick's lines are handed to the stream first: they were written before the end.
   */
  discard(err: Error): void {
    if (!this.stream.destroyed && !this.stream.writableEnded) this.batch.flush();
    else this.batch.clear();
    this.discarded = true;
    this.queue = [];
    this.queuedBytes = 0;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(err);
  }

  private flush(): void {
    this.waitingDrain = false;
    if (this.discarded) return;
    if (this.queue.length > 0) {
      const queue = this.queue;
      this.queue = [];
      this.queuedBytes = 0;
      // One write for everything that waited: fewer syscalls than replaying line by line.
      if (!this.stream.write(queue.length === 1 ? (queue[0] as string) : queue.join(""))) this.waitingDrain = true;
    }
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.resolve();
  }
}
