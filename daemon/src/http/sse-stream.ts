import type { ServerResponse } from "node:http";
import type { HttpBuffers } from "./http-buffers.js";
import { onGone } from "./http-respond.js";
import { OutputMeter } from "./output-meter.js";

/** One event kept for replay: its sequence number in the stream and its wire text. */
interface LoggedEvent {
  seq: number;
  text: string;
}

/** What a stream needs from its session: byte budgets for its reader and for replay, and the reconnect delay to advertise. */
export interface StreamOwner {
  /** Reconnect delay sent as `retry:`, in ms. */
  readonly retryMs: number;
  /** Bytes an output buffer may hold before its reader is dropped as too slow. */
  readonly maxOutgoingBytes: number;
  /** Replay bytes held by the session changed by `delta`; the session trims its oldest events past its bound. */
  replayBytesChanged(delta: number): void;
  /** A reader was dropped for not reading (counted for status). */
  slowReaderDropped(): void;
  /** The daemon-wide budget's HTTP account: what waits for a reader is charged to it. */
  readonly buffers: HttpBuffers;
}

/**
 * One SSE stream of a Streamable HTTP session: the response stream of a POST, or the session's standalone
 * GET stream. Every event gets an id `<stream>.<seq>` and is kept (within the session's replay budget)
 * until the client has certainly moved on, so a client whose connection dropped can reconnect with
 * `Last-Event-ID` and get what it missed. A response whose reader falls more than `maxOutgoingBytes`
 * behind, or that holds the most of any client when the daemon-wide budget runs out, is ended rather than
 * buffered without limit; its events stay for replay (within the session's bound; those dropped from it
 * unread are counted).
 */
export class SseStream {
  readonly id: string;
  private readonly owner: StreamOwner;
  private res: ServerResponse | undefined;
  /** What waits for the current reader, charged to the daemon-wide budget. */
  private meter: OutputMeter | undefined;
  private seq = 0;
  private readonly log: LoggedEvent[] = [];
  private logBytes = 0;
  /** Highest sequence number written to a live response. */
  private written = 0;
  /** Highest sequence number known to have left the daemon for the current reader (the rest may wait in its buffer). */
  private sent = 0;
  /** No more events will come (a POST stream whose requests are all answered). */
  finished = false;

  constructor(id: string, owner: StreamOwner) {
    this.id = id;
    this.owner = owner;
  }

  /** Whether a client is reading it now. */
  get attached(): boolean {
    return this.res !== undefined;
  }

  /** Bytes of events kept for replay. */
  get replayBytes(): number {
    return this.logBytes;
  }

  /**
   * Starts serving it on `res` (headers sent here): events after `afterSeq` are replayed first (all not yet
   * written to a reader when undefined), then live ones follow. A stream already finished and fully
   * replayed ends the response at once.
   */
  attach(res: ServerResponse, afterSeq?: number, primed = true): void {
    this.detach();
    this.res = res;
    this.meter = new OutputMeter(
      res,
      this.owner.buffers,
      () => this.cut(res),
      () => {
        if (this.res === res) this.sent = this.written;
      },
    );
    onGone(res, () => {
      if (this.res !== res) return;
      this.res = undefined;
      this.meter = undefined;
    });
    if (!res.headersSent) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", connection: "keep-alive" });
    }
    // A corked response (a POST's, see StreamableSession) sends its headers with its first bytes, on purpose.
    if (res.writableCorked === 0) res.flushHeaders();
    const from = afterSeq ?? this.written;
    this.sent = from;
    // A priming event (an id and no data) first: the client learns an id to resume from before anything
    // else happens (the point replay starts from, so nothing after it can be skipped), and `retry:` tells
    // it how soon to reconnect.
    if (primed) this.write(`id: ${this.id}.${from}\nretry: ${this.owner.retryMs}\ndata: \n\n`);
    for (const e of this.log) if (e.seq > from) this.write(e.text, e.seq);
    if (this.finished) {
      // Everything still kept went to this reader: nothing more can come (events dropped over the replay
      // bound are gone for good), so the stream is drained rather than resumable, empty, for ever.
      if (this.res === res) this.written = this.seq;
      this.end();
    }
  }

  /** Adds one message as an event: written now if a client is reading, kept for replay either way. */
  push(message: string): void {
    const seq = ++this.seq;
    const text = `id: ${this.id}.${seq}\nevent: message\ndata: ${message}\n\n`;
    this.log.push({ seq, text });
    this.logBytes += text.length;
    this.owner.replayBytesChanged(text.length);
    if (this.res) this.write(text, seq);
  }

  /** No more events: the response ends once everything was written to a reader. */
  finish(): void {
    this.finished = true;
    if (this.res && this.written >= this.seq) this.end();
  }

  /** Whether a finished stream's client has every event (nothing left to replay). */
  get drained(): boolean {
    return this.finished && this.written >= this.seq && this.res === undefined;
  }

  /** Drops the oldest kept event; returns its size (0 when none is kept). */
  dropOldest(): number {
    const e = this.log.shift();
    if (!e) return 0;
    if (e.seq > this.written) this.owner.buffers.dropped.droppedEvents++;
    this.logBytes -= e.text.length;
    return e.text.length;
  }

  /** Ends the current reader's response, if any; kept events stay. */
  detach(): void {
    this.end();
  }

  /** Forgets every kept event and ends the reader (the session is closing). */
  close(): void {
    this.detach();
    this.owner.replayBytesChanged(-this.logBytes);
    this.log.length = 0;
    this.logBytes = 0;
  }

  private write(text: string, seq?: number): void {
    const res = this.res;
    if (!res || res.destroyed) return;
    res.write(text);
    if (seq !== undefined && seq > this.written) this.written = seq;
    if ((this.meter?.written() ?? 0) > this.owner.maxOutgoingBytes) {
      // Not reading: end it here; the events stay for a reconnect with Last-Event-ID.
      this.owner.slowReaderDropped();
      this.cut(res);
      res.destroy();
    }
  }

  /**
   * Its reader is cut off (not reading, or over the budget): what it was written but not sent is lost with
   * its connection; what of that is still kept goes to a resume, the rest is counted as dropped.
   */
  private cut(res: ServerResponse): void {
    if (this.res !== res) return;
    this.meter?.stop();
    this.meter = undefined;
    this.res = undefined;
    let kept = 0;
    for (const e of this.log) if (e.seq > this.sent && e.seq <= this.written) kept++;
    this.owner.buffers.dropped.droppedEvents += Math.max(0, this.written - this.sent - kept);
    this.written = Math.min(this.written, this.lowestUnflushed());
  }

  /** The sequence before the oldest kept event (what a reader that stalled can be assumed to lack). */
  private lowestUnflushed(): number {
    return (this.log[0]?.seq ?? this.seq + 1) - 1;
  }

  private end(): void {
    const res = this.res;
    const meter = this.meter;
    this.res = undefined;
    this.meter = undefined;
    if (res && !res.writableEnded) res.end();
    // Ended, its last bytes may still wait for the reader: they count until they leave.
    meter?.written();
  }
}

/** Splits a `Last-Event-ID` (`<stream>.<seq>`) into its parts; undefined when it is not one of ours. */
export function parseEventId(value: string | undefined): { stream: string; seq: number } | undefined {
  if (value === undefined) return undefined;
  const m = /^([A-Za-z0-9]{1,32})\.(\d{1,15})$/.exec(value.trim());
  if (!m) return undefined;
  return { stream: m[1] as string, seq: Number(m[2]) };
}
