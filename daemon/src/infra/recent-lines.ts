/**
 * The most recent log lines, for `mcpd/logs` without reading the file (written or not): at most `max` are
 * shown; the list is cut back in batches of an eighth of `max` (at least 16), so keeping a line costs no
 * copy of the others, and at most that many more lines are held.
 */
export class RecentLines {
  private lines: string[] = [];
  private readonly limit: number;

  constructor(private readonly max: number) {
    this.limit = max + Math.max(16, max >> 3);
  }

  /** Keeps the lines of `chunk` (pino gives one, newline-terminated). */
  add(chunk: string): void {
    const nl = chunk.indexOf("\n");
    if (nl === chunk.length - 1) {
      if (nl > 0) this.lines.push(chunk.slice(0, nl));
    } else {
      for (const line of chunk.split("\n")) if (line.trim()) this.lines.push(line.trimEnd());
    }
    if (this.lines.length > this.limit) this.lines = this.lines.slice(-this.max);
  }

  /** The last `n` lines (at most the `max` given at construction). */
  tail(n: number): string[] {
    return n <= 0 ? [] : this.lines.slice(-Math.min(n, this.max));
  }
}
