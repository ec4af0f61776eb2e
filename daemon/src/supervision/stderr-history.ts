import { TRUNCATED, cutToBytes, stderrHeadline } from "@mcpd/transports";
import { isoTime } from "../infra/iso-time.js";

/** Marks mcpd's own lines among a server's stderr lines. */
export const STDERR_MARKER_PREFIX = "--- mcpd: ";

/**
 * The stderr lines of one server across its runs, bounded, for `mcpd logs SERVER` and the `lastStderr`
 * of `mcpd status`. A run's lines are added when it ends (the running process's lines stay with its
 * transport until then), followed by one marker line `--- mcpd: <ISO time> <how it ended> ---`; a start
 * that never spawned adds only its marker. When more than `maxLines` lines or `maxBytes` UTF-8 bytes
 * are held the oldest go; a single line longer than a quarter of `maxBytes` is cut.
 */
export class StderrHistory {
  private readonly maxLines: number;
  private readonly maxBytes: number;
  private lines: string[] = [];
  private sizes: number[] = [];
  private bytes = 0;
  private lastHeadline: string | undefined;

  constructor(maxLines: number, maxBytes: number) {
    this.maxLines = Math.max(1, Math.floor(maxLines));
    this.maxBytes = Math.max(64, Math.floor(maxBytes));
  }

  /** The line of the last ended run that best says why it ended (`stderrHeadline` of @mcpd/transports). */
  get headline(): string | undefined {
    return this.lastHeadline;
  }

  /** Adds a run that ended: its lines, then a marker saying how (`process 12 exited with code 1`). */
  endRun(lines: readonly string[], how: string, at: Date = new Date()): void {
    for (const line of lines) this.add(line);
    const headline = stderrHeadline(lines);
    if (headline !== undefined) this.lastHeadline = headline;
    this.add(`${STDERR_MARKER_PREFIX}${isoTime(at.getTime())} ${how} ---`);
  }

  /**
   * The last `n` lines of the history followed by `live` (the running process's lines), oldest first.
   */
  tail(n: number, live: readonly string[] = []): string[] {
    const take = Math.max(0, Math.floor(n));
    if (take === 0) return [];
    const fromLive = live.slice(Math.max(0, live.length - take));
    const fromHistory = this.lines.slice(Math.max(0, this.lines.length - (take - fromLive.length)));
    return fromLive.length === take ? fromLive : [...fromHistory, ...fromLive];
  }

  private add(text: string): void {
    let line = text;
    let size = Buffer.byteLength(line);
    // A quarter of the bound, so one long line never pushes out everything before it.
    const maxLine = Math.floor(this.maxBytes / 4);
    if (size > maxLine) {
      line = cutToBytes(line, maxLine - Buffer.byteLength(TRUNCATED)) + TRUNCATED;
      size = Buffer.byteLength(line);
    }
    this.lines.push(line);
    this.sizes.push(size);
    this.bytes += size;
    let drop = 0;
    let bytes = this.bytes;
    while (this.lines.length - drop > this.maxLines || bytes > this.maxBytes) bytes -= this.sizes[drop++] as number;
    if (drop > 0) {
      this.lines = this.lines.slice(drop);
      this.sizes = this.sizes.slice(drop);
      this.bytes = bytes;
    }
  }
}
