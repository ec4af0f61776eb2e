/**
 * The progress bar `mcpd call` draws on stderr while progress notifications arrive. Only used on a
 * TTY: it redraws one line with `\r` and clears it when done, so piped output stays clean.
 */

import { terminalText } from "./terminal-text.js";

/** A progress notification's numbers (MCP `notifications/progress`). */
export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * One line of progress, at most `columns` wide: `[#####-----]  50% 5/10 message` when the total is
 * known, else `[working] 5 message`.
 */
export function renderProgress(update: ProgressUpdate, columns = 80, barWidth = 24): string {
  const { progress, total, message } = update;
  let line: string;
  if (total !== undefined && Number.isFinite(total) && total > 0) {
    const ratio = Math.min(1, Math.max(0, progress / total));
    const filled = Math.round(ratio * barWidth);
    line = `[${"#".repeat(filled)}${"-".repeat(barWidth - filled)}] ${String(Math.round(ratio * 100)).padStart(3)}% ${progress}/${total}`;
  } else {
    line = `[working] ${progress}`;
  }
  // The server's words: never a control character on the terminal.
  if (message) line += ` ${terminalText(message.replace(/\s+/g, " "))}`;
  const chars = [...line];
  return chars.length > columns - 1 ? chars.slice(0, Math.max(1, columns - 1)).join("") : line;
}

/** Draws {@link renderProgress} lines onto a terminal stream, in place. */
export class ProgressBar {
  private drawn = false;
  constructor(private readonly stream: NodeJS.WritableStream & { columns?: number }) {}

  /** Redraws the bar with new numbers. */
  update(update: ProgressUpdate): void {
    // A pseudo-terminal without a size (script(1), some CI runners) reports 0 columns.
    const columns = this.stream.columns && this.stream.columns >= 20 ? this.stream.columns : 80;
    const line = renderProgress(update, columns);
    // \r returns to column 0, \x1b[K clears what a longer previous line left behind.
    this.stream.write(`\r${line}\u001b[K`);
    this.drawn = true;
  }

  /** Removes the bar, leaving the cursor at the start of an empty line. Idempotent. */
  clear(): void {
    if (!this.drawn) return;
    this.stream.write("\r\u001b[K");
    this.drawn = false;
  }
}
