import { closeSync, fstatSync, ftruncateSync, lstatSync, mkdirSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { Writable } from "node:stream";
import type { LogWriteStatus } from "@mcpd/protocol";
import { openPrivateAppend } from "./state-dir.js";
import { isoTime } from "./iso-time.js";

export interface RotatingFileOptions {
  /** Rotate when the file reaches this many bytes. */
  maxBytes: number;
  /** Rotated files kept (`mcpd.log.1` .. `mcpd.log.N`); older ones are deleted. */
  maxFiles: number;
  /**
   * Called (on a later tick, never inside a write) when a line is written again after lines were
   * dropped, with the counts: the daemon logs how many were lost and why.
   */
  onResume?: (status: LogWriteStatus) => void;
}

/** How writing the log is going, for `mcpd/status` (`daemon.log`); the shape is declared in @mcpd/protocol. */
export type { LogWriteStatus };

/** The log lines (newline-terminated, or a final unterminated piece) in `text`. */
function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") || text === "" ? n : n + 1;
}

/**
 * A log file rotated by size with a bounded number of old files, so the daemon's log can never fill a
 * disk. Writes are synchronous (one `write(2)` per log line, as pino's sync destination does): a crash
 * never loses the lines that explain it.
 *
 * Writing can never end the daemon: a line that cannot be written (ENOSPC, EIO, EDQUOT, a file that
 * cannot be reopened after rotation) is dropped and counted ({@link status}), never thrown and never
 * emitted as `error`; each later line tries again, so logging resumes by itself once the disk has room.
 * A line cut short by a full disk is taken back, so the file only ever holds whole lines.
 *
 * The file and its rotated copies are opened without following symbolic links, mode 0600; the caller
 * has checked the directory ({@link preparePrivateDir}).
 */
export class RotatingFileStream extends Writable {
  /** The open log file; undefined after a failed reopen (retried on the next line). */
  private fd: number | undefined;
  private size: number;
  /** The most recent lines, for `mcpd/logs` without reading the file (written or not). */
  private readonly recent: string[] = [];
  private dropped = 0;
  private failing = false;
  private lastError: string | undefined;
  private lastErrorAt: number | undefined;
  /** A line was cut short and could not be taken back: the next write starts on a new line. */
  private partial = false;

  /**
   * Opens (creates) the log file.
   * @throws StateDirError when `file` is a symbolic link; the errno error when it cannot be opened.
   */
  constructor(
    readonly file: string,
    private readonly opts: RotatingFileOptions,
    private readonly recentMax = 500,
  ) {
    super({ decodeStrings: false });
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    this.fd = openPrivateAppend(file);
    this.size = fstatSync(this.fd).size;
  }

  tail(n: number): string[] {
    return this.recent.slice(-n);
  }

  /** Dropped lines and the last write error, for `mcpd/status`. */
  status(): LogWriteStatus {
    return {
      droppedLines: this.dropped,
      lastError: this.lastError ?? null,
      lastErrorAt: this.lastErrorAt === undefined ? null : isoTime(this.lastErrorAt),
      failing: this.failing,
    };
  }

  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.writeLine(typeof chunk === "string" ? chunk : chunk.toString("utf8"));
    cb();
  }

  /** Appends `text` (one or more whole lines). Never throws: a line that cannot be written is counted. */
  writeLine(text: string): void {
    for (const line of text.split("\n")) if (line) this.recent.push(line);
    if (this.recent.length > this.recentMax) this.recent.splice(0, this.recent.length - this.recentMax);
    try {
      this.append(text);
    } catch (err) {
      this.dropped += countLines(text);
      this.failing = true;
      this.lastError = (err as Error).message;
      this.lastErrorAt = Date.now();
      return;
    }
    if (this.failing) {
      this.failing = false;
      const onResume = this.opts.onResume;
      if (onResume) {
        const status = this.status();
        setImmediate(() => onResume(status));
      }
    }
  }

  /** Writes `text` whole or not at all (as far as the file system lets us take a short write back). */
  private append(text: string): void {
    if (this.fd === undefined) {
      this.fd = openPrivateAppend(this.file);
      this.size = fstatSync(this.fd).size;
    }
    const buf = Buffer.from(this.partial ? `\n${text}` : text);
    if (this.size > 0 && this.size + buf.length > this.opts.maxBytes) this.rotate();
    const fd = this.fd as number;
    let written = 0;
    try {
      while (written < buf.length) written += writeSync(fd, buf, written);
    } catch (err) {
      // Out of space mid-line: cut the piece that fit back off, so the file never holds half a line.
      if (written > 0) {
        try {
          ftruncateSync(fd, fstatSync(fd).size - written);
        } catch {
          this.size += written;
          this.partial = true;
        }
      }
      throw err;
    }
    this.size += written;
    this.partial = false;
  }

  private rotate(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    // lstat, rm and rename act on a symbolic link itself, never on what it points to.
    const exists = (p: string): boolean => {
      try {
        lstatSync(p);
        return true;
      } catch {
        return false;
      }
    };
    const oldest = `${this.file}.${this.opts.maxFiles}`;
    if (exists(oldest)) rmSync(oldest, { force: true });
    for (let i = this.opts.maxFiles - 1; i >= 1; i--) {
      if (exists(`${this.file}.${i}`)) renameSync(`${this.file}.${i}`, `${this.file}.${i + 1}`);
    }
    if (this.opts.maxFiles > 0) renameSync(this.file, `${this.file}.1`);
    else rmSync(this.file, { force: true });
    this.size = 0;
    this.fd = openPrivateAppend(this.file);
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.closeFd();
    cb(err);
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.closeFd();
    cb();
  }

  private closeFd(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // Already closed or failing: nothing left to flush (writes are synchronous).
    }
    this.fd = undefined;
  }
}
