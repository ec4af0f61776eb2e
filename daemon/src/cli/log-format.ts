import { LEVEL_VALUES } from "../infra/log-line-levels.js";
import { palette, type Palette } from "./format.js";
import { terminalText } from "./terminal-text.js";

/** The names `mcpd logs` prints for the numeric levels of the daemon's lines. */
const LEVEL_NAMES: Record<number, string> = Object.fromEntries(Object.entries(LEVEL_VALUES).map(([name, n]) => [n, name.toUpperCase()]));

// Fields every pino line carries that add nothing for a reader of one machine's log.
const SKIPPED_KEYS = new Set(["level", "time", "msg", "pid", "hostname", "v"]);

function twoDigits(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}

/** Local time as `YYYY-MM-DD HH:MM:SS.mmm`. */
export function formatLocalTime(epochMs: number): string {
  const d = new Date(epochMs);
  return (
    `${d.getFullYear()}-${twoDigits(d.getMonth() + 1)}-${twoDigits(d.getDate())} ` +
    `${twoDigits(d.getHours())}:${twoDigits(d.getMinutes())}:${twoDigits(d.getSeconds())}.${twoDigits(d.getMilliseconds(), 3)}`
  );
}

/** `key=value` with the value quoted only when it needs to be (spaces, quotes, empty). */
function formatField(key: string, value: unknown): string {
  let text: string;
  if (typeof value === "string") text = /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  else if (value instanceof Object) text = JSON.stringify(value);
  else text = String(value);
  return `${key}=${text}`;
}

/**
 * Pretty-prints one line of the daemon's pino JSON log as `time LEVEL msg key=val ...`.
 * A line that is not a pino JSON object (a crash trace written to the log by the runtime) is returned
 * as it is, so nothing in the log is ever hidden. Either way control characters are shown escaped
 * ({@link terminalText}): the log quotes servers' stderr lines and errors.
 */
export function formatLogLine(line: string, colours: Palette = palette(false)): string {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return terminalText(line);
  }
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return terminalText(line);
  const e = entry as Record<string, unknown>;
  const levelNum = typeof e.level === "number" ? e.level : undefined;
  const level =
    levelNum !== undefined ? (LEVEL_NAMES[levelNum] ?? String(levelNum)) : typeof e.level === "string" ? e.level.toUpperCase() : "-";
  const time = typeof e.time === "number" ? formatLocalTime(e.time) : typeof e.time === "string" ? e.time : "-";
  const msg = typeof e.msg === "string" ? e.msg : "";
  const colourLevel =
    levelNum !== undefined && levelNum >= 50
      ? colours.red
      : levelNum === 40
        ? colours.yellow
        : levelNum !== undefined && levelNum <= 20
          ? colours.dim
          : (s: string) => s;
  const fields = Object.entries(e)
    .filter(([k]) => !SKIPPED_KEYS.has(k))
    .map(([k, v]) => formatField(k, v));
  // Each part made safe before it is coloured: the colours are the only escapes written.
  const parts = [
    colours.dim(terminalText(time)),
    colourLevel(terminalText(level.padEnd(5))),
    terminalText(msg),
    ...fields.map((f) => colours.dim(terminalText(f))),
  ];
  return parts.filter((p) => p !== "").join(" ");
}
