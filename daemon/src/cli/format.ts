/**
 * Text formatting for the `mcpd` command: colour, aligned tables, durations, sizes.
 * Pure functions: nothing here writes to a stream.
 */

/** The colours the CLI uses. With colour off every function returns its input unchanged. */
export interface Palette {
  enabled: boolean;
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

function wrap(open: number, close: number): (s: string) => string {
  return (s) => `\u001b[${open}m${s}\u001b[${close}m`;
}

const identity = (s: string): string => s;

/** Builds a palette; `enabled` false gives plain text. */
export function palette(enabled: boolean): Palette {
  if (!enabled) {
    return { enabled, bold: identity, dim: identity, red: identity, green: identity, yellow: identity, cyan: identity };
  }
  return { enabled, bold: wrap(1, 22), dim: wrap(2, 22), red: wrap(31, 39), green: wrap(32, 39), yellow: wrap(33, 39), cyan: wrap(36, 39) };
}

/**
 * Whether to colour output for a stream: only on a TTY, never with `NO_COLOR` set (any value, see
 * no-color.org) or `TERM=dumb`; `FORCE_COLOR` (non-empty, not `0`) forces it on.
 */
export function useColour(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0") return true;
  if (env.TERM === "dumb") return false;
  return stream.isTTY === true;
}

// Matches SGR escape sequences, so widths are measured on visible characters.
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC (U+001B) is the character this pattern exists to find.
const ANSI = /\u001b\[[0-9;]*m/g;

/** The visible width of a string (escape codes do not count). */
export function visibleWidth(s: string): number {
  return [...s.replace(ANSI, "")].length;
}

/** Right-pads to a visible width. */
function pad(s: string, width: number): string {
  const w = visibleWidth(s);
  return w >= width ? s : s + " ".repeat(width - w);
}

/**
 * Renders rows as columns separated by two spaces, each column as wide as its widest cell.
 * The last column is not padded (no trailing spaces). `headers` are shown bold when colour is on.
 */
export function table(headers: string[], rows: string[][], colours: Palette = palette(false)): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, i) => Math.max(...all.map((r) => visibleWidth(r[i] ?? ""))));
  const line = (cells: string[], style: (s: string) => string = identity): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? style(c) : style(pad(c, widths[i] ?? 0))))
      .join("  ")
      .trimEnd();
  return [line(headers, colours.bold), ...rows.map((r) => line(headers.map((_, i) => r[i] ?? "")))].join("\n");
}

/** Human duration from milliseconds: `850ms`, `12s`, `5m 3s`, `2h 4m`, `3d 1h`; `-` when unknown. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return "-";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** Latency in milliseconds with sensible precision: `0.42ms`, `12.3ms`, `1534ms`; `-` when unknown. */
export function formatLatency(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "-";
  if (ms < 1) return `${ms.toFixed(2)}ms`;
  if (ms < 100) return `${ms.toFixed(1)}ms`;
  return `${Math.round(ms)}ms`;
}

/** Bytes as `512 B`, `1.5 KiB`, `3.2 MiB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/** Cuts a string to `max` visible characters, ending with `…` when cut; newlines become spaces. */
export function truncate(s: string, max: number): string {
  const flat = s.replace(/\s*\n\s*/g, " ");
  const chars = [...flat];
  return chars.length <= max ? flat : chars.slice(0, Math.max(0, max - 1)).join("") + "…";
}

/** The first line (sentence-ish) of a description, for one-line listings. */
export function firstLine(s: string | undefined | null): string {
  if (!s) return "";
  return (s.split("\n").find((l) => l.trim() !== "") ?? "").trim();
}
