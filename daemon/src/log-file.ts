import { closeSync, existsSync, fstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { Writable } from "node:stream";

export interface RotatingFileOptions {
  /** Rotate when the file reaches this many bytes. */
  maxBytes: number;
  /** Rotated files kept (`mcpd.log.1` .. `mcpd.log.N`); older ones are deleted. */
  maxFiles: number;
}

/**
 * A log file rotated by size with a bounded number of old files, so the daemon's log can never fill a
 * disk. Writes are synchronous (one `write(2)` per log line, as pino's sync destination does): a crash
 * never loses the lines that explain it.
 */
export class RotatingFileStream extends Writable {
  private fd: number;
  private size: number;
  /** The most recent lines, for `mcpd/logs` without reading the file. */
  private readonly recent: string[] = [];

  constructor(
    private readonly file: string,
    private readonly opts: RotatingFileOptions,
    private readonly recentMax = 500,
  ) {
    super({ decodeStrings: false });
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    this.fd = openSync(file, "a", 0o600);
    this.size = fstatSync(this.fd).size;
  }

  tail(n: number): string[] {
    return this.recent.slice(-n);
  }

  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    try {
      this.writeLine(typeof chunk === "string" ? chunk : chunk.toString("utf8"));
      cb();
    } catch (err) {
      cb(err as Error);
    }
  }

  writeLine(text: string): void {
    const bytes = Buffer.byteLength(text);
    if (this.size > 0 && this.size + bytes > this.opts.maxBytes) this.rotate();
    writeSync(this.fd, text);
    this.size += bytes;
    for (const line of text.split("\n")) if (line) this.recent.push(line);
    if (this.recent.length > this.recentMax) this.recent.splice(0, this.recent.length - this.recentMax);
  }

  private rotate(): void {
    closeSync(this.fd);
    const oldest = `${this.file}.${this.opts.maxFiles}`;
    if (existsSync(oldest)) rmSync(oldest, { force: true });
    for (let i = this.opts.maxFiles - 1; i >= 1; i--) {
      if (existsSync(`${this.file}.${i}`)) renameSync(`${this.file}.${i}`, `${this.file}.${i + 1}`);
    }
    if (this.opts.maxFiles > 0) renameSync(this.file, `${this.file}.1`);
    else rmSync(this.file, { force: true });
    this.fd = openSync(this.file, "a", 0o600);
    this.size = 0;
  }

  override _final(cb: (err?: Error | null) => void): void {
    try {
      closeSync(this.fd);
      cb();
    } catch (err) {
      cb(err as Error);
    }
  }
}
