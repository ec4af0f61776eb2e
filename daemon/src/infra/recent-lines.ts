/**
 * The most recent log lines, for `mcpd/logs` without reading the file (written or not): at most `max` are
 * shown; the list is cut back in batches, so keeping a line costs no copy of the others.
 */
export class RecentLines {
  private lines: string[] = [];

  constructor(private readonly max: number) {}

  /** Keeps the lines of `chunk` (pino gives one, newline-terminated). */
  add(chunk: string): void {
    const nl = chunk.indexOf("\n");
    if (nl === chunk.length - 1) {
      if (nl > 0) this.lines.push(chunk.slice(0, nl));
    } else {
      for (const line of chunk.split("\n")) if (line.trim()) this.lines.push(line.trimEnd());
    }
    if (this.lines.length > 2 * this.max) this.lines = this.lines.slice(-this.max);
  }

  /** The last `n` lines (at most the `max` given at construction). */
  tail(n: number): string[] {
    return n <= 0 ? [] : this.lines.slice(-Math.min(n, this.max));
  }
}
