import type { LogWriteStatus, RotatingFileStream } from "./log-file.js";
import { isoTime } from "./iso-time.js";
import { RecentLines } from "./recent-lines.js";

export interface StderrLogOptions {
  /** Opens the log file that takes over once the stream cannot be written (tried again with each line while it fails). */
  openFallback: () => RotatingFileStream;
  /**
   * Called (on a later tick, never inside a write) when the stream failed and the log moved to the file,
   * with the error that ended the stream: the daemon logs it there.
   */
  onFallback?: (error: string) => void;
  /** Lines kept for `mcpd/logs`. Default 500. */
  recentMax?: number;
}

/**
 * The foreground daemon's log destination: JSON lines to stderr (a terminal, a pipe, the journal).
 * When stderr can no longer be written (its terminal closed, the reader of its pipe exited: EPIPE, EIO,
 * or a full disk under a redirected file), that line and every later one go to the log file instead,
 * for the rest of the daemon's life: a closed stderr never ends the daemon and never loses its log. A
 * line that the file cannot take either is dropped and counted ({@link status}).
 */
export class StderrLog {
  private readonly recent: RecentLines;
  /** The error that ended the stream, once one did. */
  private broken: string | undefined;
  private fallback: RotatingFileStream | undefined;
  /** Lines dropped because the log file could not even be opened. */
  private droppedUnopened = 0;
  private openError: { message: string; at: number } | undefined;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly opts: StderrLogOptions,
  ) {
    this.recent = new RecentLines(opts.recentMax ?? 500);
  }

  /** The log file in use since stderr failed, else undefined. */
  get file(): string | undefined {
    return this.fallback?.file;
  }

  tail(n: number): string[] {
    return this.recent.tail(n);
  }

  /** Dropped lines and the last write error, for `mcpd/status`. */
  status(): LogWriteStatus {
    const file = this.fallback?.status();
    const fileErrorAt = file?.lastErrorAt ? Date.parse(file.lastErrorAt) : undefined;
    const open = this.openError;
    const latest = open !== undefined && (fileErrorAt === undefined || open.at > fileErrorAt) ? open : undefined;
    return {
      droppedLines: this.droppedUnopened + (file?.droppedLines ?? 0),
      lastError: latest ? latest.message : (file?.lastError ?? null),
      lastErrorAt: latest ? isoTime(latest.at) : (file?.lastErrorAt ?? null),
      failing: this.fallback === undefined ? this.openError !== undefined : file?.failing === true,
    };
  }

  /** Writes one chunk of log lines (pino calls this). Never throws. */
  write(chunk: string): boolean {
    this.recent.add(chunk);
    if (this.broken !== undefined) {
      this.toFile(chunk);
      return true;
    }
    try {
      // The callback reports a failed write (EPIPE comes back asynchronously): that chunk goes to the
      // file, and so does every chunk written after it (their callbacks fail in order).
      this.out.write(chunk, (err?: Error | null) => {
        if (err) this.fail(err, chunk);
      });
    } catch (err) {
      this.fail(err as Error, chunk);
    }
    return true;
  }

  private fail(err: Error, chunk: string): void {
    if (this.broken === undefined) {
      this.broken = err.message;
      const onFallback = this.opts.onFallback;
      if (onFallback) setImmediate(() => onFallback(err.message));
    }
    this.toFile(chunk);
  }

  private toFile(chunk: string): void {
    if (this.fallback === undefined) {
      try {
        this.fallback = this.opts.openFallback();
        this.openError = undefined;
      } catch (err) {
        this.droppedUnopened += chunk.split("\n").filter((l) => l.trim() !== "").length;
        this.openError = { message: (err as Error).message, at: Date.now() };
        return;
      }
    }
    this.fallback.write(chunk);
  }

  /** Writes what the log file holds, once the log has moved there (at exit; after a fatal line). stderr is written synchronously. */
  flushSync(): void {
    this.fallback?.flushSync();
  }

  /** Closes the log file, once the log has moved there. */
  close(): Promise<void> {
    return this.fallback?.close() ?? Promise.resolve();
  }
}

let stdioGuarded = false;

/**
 * Makes a failed write to the process's stdout or stderr (EPIPE once the reader of a pipe exits, EIO
 * from a closed terminal, ENOSPC under a redirected file) harmless: without a listener, the stream's
 * `error` event is an uncaught exception that ends the daemon and leaves its socket and pid file behind.
 * What was lost is accounted for by the writer ({@link StderrLog}). Installed once per process.
 */
export function ignoreStdioErrors(): void {
  if (stdioGuarded) return;
  stdioGuarded = true;
  for (const stream of [process.stdout, process.stderr]) {
    // Replaces the CLI's own handler (a command ends when its reader goes away; the daemon never does).
    stream.removeAllListeners("error");
    stream.on("error", () => {});
  }
}
