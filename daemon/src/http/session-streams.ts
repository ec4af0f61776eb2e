import type { Logger } from "@mcpd/protocol";
import type { HttpBuffers, HttpHolder } from "./http-buffers.js";
import { SseStream, type StreamOwner } from "./sse-stream.js";

/** Bounds and timings of one Streamable HTTP session (from the front end's settings). */
export interface StreamableSessionLimits {
  /** `retry:` advertised on every SSE stream, in ms. */
  retryMs: number;
  /** Bytes one response may have waiting for its reader; past it the reader is dropped. */
  maxOutgoingBytes: number;
  /** Bytes of SSE events kept per session for resumption with `Last-Event-ID`; the oldest go first. */
  maxReplayBytes: number;
  /** POSTs being answered at once in one session. */
  maxStreamsPerSession: number;
  /** A call that may run long is switched from JSON to SSE when unanswered after this many ms (0: SSE at once). */
  streamAfterMs: number;
}

/**
 * The SSE streams of one Streamable HTTP session that can be resumed (its standalone GET stream, always
 * there, and its POSTs' streams), and the events they keep for resumption: at most `maxReplayBytes` per
 * session, oldest dropped first, and charged to the daemon-wide budget, which trims the session holding
 * the most to half when it runs out.
 */
export class SessionStreams implements StreamOwner, HttpHolder {
  held = 0;
  readonly buffers: HttpBuffers;
  /** Every stream that can be resumed, by id, oldest first. */
  private readonly byId = new Map<string, SseStream>();
  readonly standalone: SseStream;
  private counter = 0;
  private replay = 0;
  /** Readers dropped for falling too far behind. */
  slowReaders = 0;

  /** @param label the session in log lines */
  constructor(
    private readonly limits: StreamableSessionLimits,
    buffers: HttpBuffers,
    private readonly log: Logger,
    private readonly label: string,
  ) {
    this.buffers = buffers;
    this.standalone = this.open();
  }

  get retryMs(): number {
    return this.limits.retryMs;
  }

  get maxOutgoingBytes(): number {
    return this.limits.maxOutgoingBytes;
  }

  /** A new resumable stream. */
  open(): SseStream {
    const s = new SseStream(`s${++this.counter}`, this);
    this.byId.set(s.id, s);
    return s;
  }

  /** A resumable stream by id (for `Last-Event-ID`). */
  get(id: string): SseStream | undefined {
    return this.byId.get(id);
  }

  /** Whether a client reads any of them now. */
  get anyAttached(): boolean {
    for (const s of this.byId.values()) if (s.attached) return true;
    return false;
  }

  /** Bytes of events kept for resumption. */
  get replayBytes(): number {
    return this.replay;
  }

  replayBytesChanged(delta: number): void {
    this.replay += delta;
    this.buffers.set(this, this.replay);
    if (this.replay > this.limits.maxReplayBytes) this.trimReplay(this.limits.maxReplayBytes);
  }

  /**
   * Drops kept events, oldest first, until at most `bytes` are kept: whole streams nobody reads any more
   * go before the kept tail of live ones. (Events are only dropped from the replay log; a reader reading
   * now has them already.)
   */
  trimReplay(bytes: number): void {
    for (const s of this.byId.values()) {
      while (this.replay > bytes) {
        const n = s.dropOldest();
        if (n === 0) break;
        this.replay -= n;
      }
      if (s !== this.standalone && s.finished && s.replayBytes === 0 && !s.attached) this.byId.delete(s.id);
      if (this.replay <= bytes) break;
    }
    this.buffers.set(this, this.replay);
  }

  /** Holding the most when the daemon-wide budget ran out: the oldest half of the kept events go. */
  shed(total: number, max: number): void {
    this.buffers.dropped.replayTrims++;
    this.log.warn(
      { session: this.label, heldBytes: this.replay, totalBytes: total, budgetBytes: max },
      "over the daemon-wide buffer budget; dropping the oldest kept events of the HTTP session holding the most",
    );
    this.trimReplay(Math.floor(this.replay / 2));
  }

  slowReaderDropped(): void {
    this.slowReaders++;
    this.log.warn(
      { session: this.label },
      "HTTP client is not reading its SSE stream; dropped the stream (its events stay for resumption)",
    );
  }

  /** A POST's stream has every answer: it ends, and is forgotten once its reader has everything. */
  finish(stream: SseStream): void {
    stream.finish();
    this.settle(stream);
  }

  /** A stream resumed with `Last-Event-ID` (or finished) and now fully read: forget it. */
  settle(stream: SseStream): void {
    if (stream !== this.standalone && stream.drained) {
      stream.close();
      this.byId.delete(stream.id);
    }
  }

  /** The session ends: every stream closes, every kept event goes. */
  closeAll(): void {
    for (const s of this.byId.values()) s.close();
    this.byId.clear();
  }
}
