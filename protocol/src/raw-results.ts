/**
 * The text an answer's `result` arrived in, kept beside the parsed object so a relay can pass the answer
 * on as written instead of encoding it again (see `encodeRelayedLine`). A decoder keeps it only when asked
 * (`keepResults`: mcpd's upstream transports); the entry goes with the result object (a WeakMap).
 *
 * Relaying the kept text is right only while the object is as it was parsed: mcpd never changes a decoded
 * message in place (a view that rewrites an answer makes a new object, which has no kept text).
 */
import { PROTOCOL_DEFAULTS } from "./defaults.js";
import { memberText } from "./json-members.js";

const LINES = new WeakMap<object, string>();

/**
 * Keeps `line` as the text of `message.result`, when that is an object and the line is at least
 * `PROTOCOL_DEFAULTS.keepResultMinChars` long. `line` is the JSON text `message` was parsed from.
 */
export function keepResultText(message: unknown, line: string): void {
  if (line.length < PROTOCOL_DEFAULTS.keepResultMinChars || typeof message !== "object" || message === null) return;
  const result = (message as { result?: unknown }).result;
  if (typeof result === "object" && result !== null) LINES.set(result, line);
}

/**
 * The text `result` arrived in, exactly as its sender wrote it; undefined when none was kept or it cannot
 * be passed on as is: its line held a raw CR (whitespace to JSON, a line break to some JSONL readers) or a
 * member name written with escapes.
 */
export function keptResultText(result: object): string | undefined {
  const line = LINES.get(result);
  if (line === undefined || line.includes("\r")) return undefined;
  return memberText(line, "result");
}
