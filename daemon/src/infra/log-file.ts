import { fstatSync, lstatSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import type { LogWriteStatus } from "@mcpd/protocol";
import sonicBoom from "sonic-boom";
import { flushHeld, heldLines } from "./held-lines.js";
import { isoTime } from "./iso-time.js";
import { RecentLines } from "./recent-lines.js";
import { openPrivateAppend } from "./state-dir.js";

export interface RotatingFileOptions {
  /** Rotate when the file would pass this many bytes. */
  maxBytes: number;
  /** Rotated files kept (`mcpd.log.1` .. `mcpd.log.N`); older ones are deleted. */
  maxFiles: number;
  /** Bytes of lines held in memory while the file cannot be written (a full disk); lines past it are dropped and counted. */
  maxHeldBytes: number;
  /** While writes fail, what is held is tried again after this many ms (and with every new line). */
  retryMs: number;
  /**
   * Called (on a later tick, never inside a write) when a write succeeds again after writes failed, with
   * the counts: the daemon logs how many lines were lost and why.
   */
  onResume?: (status: LogWriteStatus) => void;
}

// sonic-boom is CommonJS whose named export Node's ES module loader cannot see: its exports object holds it.
const { SonicBoom } = sonicBoom;
type SonicBoom = InstanceType<typeof SonicBoom>;

/** How writing the log is going, for `mcpd/status` (`daemon.log`); the shape is declared in @mcpd/protocol. */
export type { LogWriteStatus };

/** The log lines (newline-terminated, or a final unterminated piece) in `text`. */
export function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") || text === "" ? n : n + 1;
}

/** Whether anything is at `p`, not following a symbolic link. */
function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * The daemon's log file as a pino destination: rotated by size with a bounded number of old files, so the
 * log can never fill a disk, and written by sonic-boom, pino's asynchronous destination: a log call never
 * waits for the disk, and the lines logged while a write is under way leave together in the next one
 * (at trace level, a few writes for many relayed calls instead of one per line). What is held is written
 * by {@link flushSync} at exit and after a fatal line (the daemon's log wires both), so the lines that
 * explain a crash reach the file.
 *
 * Writing can never end the daemon: a write that fails (ENOSPC, EIO, EDQUOT) is neither thrown nor
 * emitted as `error`; sonic-boom holds the lines (up to `maxHeldBytes`, past which they are dropped and
 * counted, {@link status}) and tries again with each new line and every `retryMs`, so logging resumes by
 * itself once the disk has room, the line a full disk cut short completed first. A file that cannot be reopened after a
 * rotation is tried again with each line; its lines are dropped and counted meanwhile.
 *
 * The file and its rotated copies are opened without following symbolic links, mode 0600, and a FIFO,
 * another user's file or one with other hard links is refused ({@link openPrivateAppend}); the caller
 * has checked the directory ({@link preparePrivateDir}).
 */
export class RotatingFileStream {
  /** The open file's writer; undefined after a failed reopen (retried with the next line). */
  private boom: SonicBoom | undefined;
  /** Bytes given to the open file (written or held). */
  private size = 0;
  /** Writers of rotated-out files: they finish what they hold, then close their file. */
  private readonly retiring = new Set<SonicBoom>();
  /** The most recent lines, for `mcpd/logs` without reading the file (written or not). */
  private readonly recent: RecentLines;
  private dropped = 0;
  private failing = false;
  private lastError: string | undefined;
  private lastErrorAt: number | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;

  /**
   * Opens (creates) the log file.
   * @throws StateDirError when `file` is a symbolic link, a FIFO, another user's file; the errno error when it cannot be opened.
   */
  constructor(
    readonly file: string,
    private readonly opts: RotatingFileOptions,
    recentMax = 500,
  ) {
    this.recent = new RecentLines(recentMax);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    this.boom = this.open();
  }

  tail(n: number): string[] {
    return this.recent.tail(n);
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

  /** Appends `text` (one or more whole lines; pino gives one). Never throws. Lines after {@link close} go nowhere. */
  write(text: string): boolean {
    this.recent.add(text);
    if (this.closed) return true;
    let boom: SonicBoom;
    try {
      const bytes = Buffer.byteLength(text);
      // No rotation while writes fail: the writer being retired would hold its lines with nowhere to go.
      if (this.boom === undefined) boom = this.boom = this.open();
      else if (this.size > 0 && this.size + bytes > this.opts.maxBytes && !this.failing) boom = this.rotate();
      else boom = this.boom;
      this.size += bytes;
    } catch (err) {
      this.noteError(err as Error);
      this.dropped += countLines(text);
      return true;
    }
    boom.write(text);
    return true;
  }

  /**
   * Writes every held line now (at exit; after a fatal line), in order. Never blocks on a failing file: what
   * cannot be written stays held (see {@link flushHeld}).
   */
  flushSync(): void {
    for (const boom of [...this.retiring, this.boom]) {
      if (boom === undefined || (boom as unknown as { destroyed: boolean }).destroyed) continue;
      const err = flushHeld(boom);
      if (err) this.noteError(err);
    }
  }

  /** Stops taking lines; resolves once what is held is written and the file closed (what cannot be written is dropped and counted). */
  close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    if (this.boom) this.retire(this.boom);
    this.boom = undefined;
    const closing = [...this.retiring].map((b) => new Promise<void>((resolve) => b.once("close", () => resolve())));
    return Promise.all(closing).then(() => undefined);
  }

  private open(): SonicBoom {
    const fd = openPrivateAppend(this.file);
    this.size = fstatSync(fd).size;
    const boom = new SonicBoom({ fd, sync: false, minLength: 0, maxLength: this.opts.maxHeldBytes });
    boom.on("error", (err: Error) => this.onError(boom, err));
    boom.on("write", () => this.onWritten());
    boom.on("drop", (data: unknown) => {
      this.dropped += countLines(String(data));
    });
    return boom;
  }

  private onError(boom: SonicBoom, err: Error): void {
    this.noteError(err);
    // A retired writer whose file cannot take what it holds gives it up, so its file is closed. sonic-boom
    // emits the error between writes: nothing of this writer is under way in the thread pool.
    if (this.retiring.has(boom) || this.closed) {
      this.dropped += heldLines(boom);
      boom.destroy();
      return;
    }
    // sonic-boom tries again only when given a line: an idle daemon's held lines must reach the disk too.
    this.retry ??= setTimeout(() => {
      this.retry = undefined;
      if (this.boom === boom && this.failing) boom.write("");
    }, this.opts.retryMs).unref();
  }

  private onWritten(): void {
    if (!this.failing) return;
    this.failing = false;
    const onResume = this.opts.onResume;
    if (onResume) {
      const status = this.status();
      setImmediate(() => onResume(status));
    }
  }

  private noteError(err: Error): void {
    this.failing = true;
    this.lastError = err.message;
    this.lastErrorAt = Date.now();
  }

  /** The writer ends: it writes what it holds (to its file, renamed or not), then closes it. */
  private retire(boom: SonicBoom): void {
    this.retiring.add(boom);
    boom.once("close", () => this.retiring.delete(boom));
    boom.end();
  }

  /** `mcpd.log` becomes `mcpd.log.1` (its writer finishing there), and so on; a new `mcpd.log` is opened. */
  private rotate(): SonicBoom {
    const old = this.boom;
    this.boom = undefined;
    if (old) this.retire(old);
    // lstat, rm and rename act on a symbolic link itself, never on what it points to.
    const oldest = `${this.file}.${this.opts.maxFiles}`;
    if (exists(oldest)) rmSync(oldest, { force: true });
    for (let i = this.opts.maxFiles - 1; i >= 1; i--) {
      if (exists(`${this.file}.${i}`)) renameSync(`${this.file}.${i}`, `${this.file}.${i + 1}`);
    }
    if (this.opts.maxFiles > 0) renameSync(this.file, `${this.file}.1`);
    else rmSync(this.file, { force: true });
    this.boom = this.open();
    return this.boom;
  }
}
