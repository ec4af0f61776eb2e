import sonicBoom from "sonic-boom";
import { countLines, type LogWriteStatus, type RotatingFileStream } from "./log-file.js";
import { isIdle, takeHeld } from "./held-lines.js";
import { isoTime } from "./iso-time.js";
import { RecentLines } from "./recent-lines.js";

// sonic-boom is CommonJS whose named export Node's ES module loader cannot see: its exports object holds it.
const { SonicBoom } = sonicBoom;
type SonicBoom = InstanceType<typeof SonicBoom>;

export interface StderrLogOptions {
  /** Opens the log file that takes over once the stream cannot be written (tried again with each line while it fails). */
  openFallback: () => RotatingFileStream;
  /**
   * Called (on a later tick, never inside a write) when the stream failed and the log moved to the file,
   * with the error that ended the stream: the daemon logs it there.
   */
  onFallback?: (error: string) => void;
  /** Called (on a later tick) when stderr takes lines again after lines were dropped, with the counts. */
  onResume?: (status: LogWriteStatus) => void;
  /** Bytes of lines held while stderr is not read; past it lines are dropped and counted. */
  maxHeldBytes: number;
  /** At {@link StderrLog.close}, how long what is held may take to be written before it is discarded, in ms. */
  closeWaitMs: number;
  /** Lines kept for `mcpd/logs`. Default 500. */
  recentMax?: number;
}

/**
 * The foreground daemon's log destination: JSON lines to stderr (descriptor 2: a terminal, a pipe, the
 * journal), written by sonic-boom, never by a synchronous write: a terminal that stops reading (Ctrl-S) or
 * a pipe nobody reads must not stop the daemon. A stopped terminal holds one write in the thread pool
 * (Node makes a terminal's descriptor blocking); a full pipe answers EAGAIN and is tried again every
 * 100 ms. Meanwhile at most `maxHeldBytes` of lines are held; later lines are dropped and counted
 * ({@link status}), and once stderr takes lines again `onResume` says how many were lost.
 *
 * When stderr can no longer be written (its terminal closed, the reader of its pipe exited: EPIPE, EIO,
 * or a full disk under a redirected file), what it held and every later line go to the log file instead,
 * for the rest of the daemon's life: a closed stderr never ends the daemon and never loses its log. A
 * line that the file cannot take either is dropped and counted.
 */
export class StderrLog {
  private readonly recent: RecentLines;
  private readonly boom: SonicBoom;
  /** The error that ended the stream, once one did. */
  private broken: string | undefined;
  /** At close, what stderr still held was discarded: its errors no longer matter. */
  private abandoned = false;
  private fallback: RotatingFileStream | undefined;
  /** Lines dropped because the log file could not even be opened, or stderr held its bound. */
  private droppedUnopened = 0;
  private droppedStderr = 0;
  /** Lines are being dropped because stderr is not read. */
  private dropping = false;
  private openError: { message: string; at: number } | undefined;
  private stderrError: { message: string; at: number } | undefined;
  /** While {@link close} waits for what stderr holds: called after each write. */
  private closeWaiter: (() => void) | undefined;

  constructor(
    fd: number,
    private readonly opts: StderrLogOptions,
  ) {
    this.recent = new RecentLines(opts.recentMax ?? 500);
    this.boom = new SonicBoom({ fd, sync: false, minLength: 0, maxLength: opts.maxHeldBytes, retryEAGAIN: () => !this.abandoned });
    this.boom.on("error", (err: Error) => this.fail(err));
    this.boom.on("drop", (data: unknown) => this.onDrop(String(data)));
    this.boom.on("write", () => this.onWritten());
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
    const own = [this.openError, this.stderrError].filter((e) => e !== undefined).sort((a, b) => b.at - a.at)[0];
    const latest = own !== undefined && (fileErrorAt === undefined || own.at > fileErrorAt) ? own : undefined;
    const failingHere = this.fallback === undefined ? this.openError !== undefined : file?.failing === true;
    return {
      droppedLines: this.droppedUnopened + this.droppedStderr + (file?.droppedLines ?? 0),
      lastError: latest ? latest.message : (file?.lastError ?? null),
      lastErrorAt: latest ? isoTime(latest.at) : (file?.lastErrorAt ?? null),
      failing: this.dropping || failingHere,
    };
  }

  /** Writes one chunk of log lines (pino calls this). Never throws, never waits. */
  write(chunk: string): boolean {
    this.recent.add(chunk);
    if (this.broken !== undefined) this.toFile(chunk);
    else if (!this.abandoned) this.boom.write(chunk);
    return true;
  }

  private onDrop(data: string): void {
    this.droppedStderr += countLines(data);
    if (this.dropping) return;
    this.dropping = true;
    this.stderrError = { message: "stderr is not being read: log lines past what it holds are dropped", at: Date.now() };
  }

  private onWritten(): void {
    // sonic-boom emits `write` before it takes the bytes off what it holds: look once it has.
    if (this.closeWaiter) process.nextTick(() => this.closeWaiter?.());
    if (!this.dropping) return;
    this.dropping = false;
    const onResume = this.opts.onResume;
    if (onResume) {
      const status = this.status();
      setImmediate(() => onResume(status));
    }
  }

  /** stderr failed (sonic-boom emits it between writes): what it held, then every later line, go to the file. */
  private fail(err: Error): void {
    if (this.abandoned || this.broken !== undefined) return;
    this.broken = err.message;
    const onFallback = this.opts.onFallback;
    if (onFallback) setImmediate(() => onFallback(err.message));
    // Line by line, as they were logged: the file holds (or drops) each on its own.
    for (const line of takeHeld(this.boom).split(/(?<=\n)/)) if (line !== "") this.toFile(line);
  }

  private toFile(chunk: string): void {
    if (this.fallback === undefined) {
      try {
        this.fallback = this.opts.openFallback();
        this.openError = undefined;
      } catch (err) {
        this.droppedUnopened += countLines(chunk);
        this.openError = { message: (err as Error).message, at: Date.now() };
        return;
      }
    }
    this.fallback.write(chunk);
  }

  /**
   * Writes what the log file holds, once the log has moved there (at exit; after a fatal line). Never
   * stderr: a write that waits there (a stopped terminal) would hold the exit.
   */
  flushSync(): void {
    this.fallback?.flushSync();
  }

  /**
   * Stops writing: resolves once what stderr holds is written, or after `closeWaitMs`, when the rest is
   * discarded (and counted), so that the daemon can exit; and closes the log file, once the log has moved
   * there. A write still under way in the thread pool (a stopped terminal) is left behind: the daemon's
   * process exits all the same (see the `start` command).
   */
  async close(): Promise<void> {
    if (this.broken === undefined && !isIdle(this.boom)) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.closeWaiter = undefined;
          resolve();
        }, this.opts.closeWaitMs);
        this.closeWaiter = () => {
          if (!isIdle(this.boom)) return;
          clearTimeout(timer);
          this.closeWaiter = undefined;
          resolve();
        };
      });
    }
    if (this.broken === undefined && !isIdle(this.boom)) {
      this.abandoned = true;
      this.droppedStderr += countLines(takeHeld(this.boom));
    }
    await this.fallback?.close();
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

/**
 * Makes a terminal on the process's stderr non-blocking while the daemon runs, and blocking again at exit.
 * Node makes a terminal's descriptor blocking, so a write to a stopped terminal (Ctrl-S) waits in the
 * thread pool until someone presses Ctrl-Q, and the exit waits for that thread. Non-blocking, the write
 * answers EAGAIN and {@link StderrLog} tries again later or, at exit, gives the output up. The flag belongs
 * to the terminal's open file, shared with the shell that started the daemon (which waits meanwhile):
 * hence the restore. `_handle.setBlocking` is Node's own (libuv's uv_stream_set_blocking); without it,
 * nothing changes.
 */
export function unblockTerminal(stream: NodeJS.WriteStream = process.stderr): void {
  if (!stream.isTTY) return;
  const handle = (stream as unknown as { _handle?: { setBlocking?: (blocking: boolean) => number } })._handle;
  if (typeof handle?.setBlocking !== "function") return;
  handle.setBlocking(false);
  process.once("exit", () => handle.setBlocking?.(true));
}
