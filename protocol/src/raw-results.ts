/**
 * The text an answer's `result` arrived in, kept beside the parsed object so a relay can pass the answer
 * on as written instead of encoding it again ({@link encodeRelayed}, {@link encodeRelayedLine}). A decoder keeps it only when asked
 * (`keepResults`: mcpd's upstream transports); the entry goes with the result object (a WeakMap).
 *
 * Relaying the kept text is right only while the object is as it was parsed: mcpd never changes a decoded
 * message in place (a view that rewrites an answer makes a new object, which has no kept text).
 */
import { PROTOCOL_DEFAULTS } from "./defaults.js";
import { isSpace, memberText, valueEnd } from "./json-members.js";

const LINES = new WeakMap<object, string>();

/**
 * The answer a `keepResults` decoder is delivering right now (see {@link deliverKept}): the message, its
 * result object and the line it was parsed from. A relay that answers its client while the answer is
 * being delivered (mcpd's relay path is synchronous from the server's line to the client's) finds the
 * text here, whatever its size, without a WeakMap entry.
 */
let deliveringMessage: Record<string, unknown> | undefined;
let deliveringResult: object | undefined;
let deliveringLine = "";

/**
 * Hands `value`, parsed from `line` (exactly the one JSONL line, without its `\n`, that `JSON.parse` read
 * it from: a caller passing any other text would have that text relayed), to `deliver`, with its text at hand for the relay while it runs
 * ({@link encodeRelayed}); a long line's result text is also kept for relays that happen later
 * ({@link keepResultText}). Nested deliveries restore the outer one.
 */
export function deliverKept(value: unknown, line: string, deliver: (value: unknown) => void): void {
  keepResultText(value, line);
  const result = typeof value === "object" && value !== null ? (value as { result?: unknown }).result : undefined;
  if (typeof result !== "object" || result === null) {
    deliver(value);
    return;
  }
  const message = deliveringMessage;
  const outer = deliveringResult;
  const outerLine = deliveringLine;
  deliveringMessage = value as Record<string, unknown>;
  deliveringResult = result;
  deliveringLine = line;
  try {
    deliver(value);
  } finally {
    deliveringMessage = message;
    deliveringResult = outer;
    deliveringLine = outerLine;
  }
}

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
 * be passed on as is: its text held a raw line break (whitespace to JSON, but the end of a line in JSONL
 * and of a `data:` line in SSE: an HTTP body or WebSocket frame may be pretty-printed; a CR is a line break
 * to some JSONL readers) or a member name written with escapes.
 */
export function keptResultText(result: object): string | undefined {
  const line = LINES.get(result);
  if (line === undefined || line.includes("\n") || line.includes("\r")) return undefined;
  return memberText(line, "result");
}

/**
 * `JSON.stringify(message)`, except that a `result` whose text was kept ({@link keepResultText}) is
 * written as that text instead of being encoded again: relaying an answer then costs a scan of its text,
 * not a `JSON.stringify` of the whole result (~4x less for a 100 KB one), and the client gets the result
 * exactly as the server wrote it. Other members are encoded as `JSON.stringify` would. The text never
 * holds a raw line break, so it is one JSONL line or one SSE `data:` line.
 *
 * @throws TypeError when the value has no JSON form (`undefined`, a function, a symbol), or whatever
 * `JSON.stringify` throws (BigInt, cycles).
 */
export function encodeRelayed(message: unknown): string {
  const spliced = splicedAnswer(message);
  if (spliced !== undefined) return spliced;
  const text = keptTextOf(message);
  if (text === undefined) {
    const json = JSON.stringify(message) as string | undefined;
    if (json === undefined) throw new TypeError(`encodeRelayed: a ${typeof message} has no JSON form`);
    return json;
  }
  const m = message as { jsonrpc?: unknown; id?: unknown };
  // The shape a relayed answer has (made by the relay itself), written at once.
  if (m.jsonrpc === "2.0" && (typeof m.id === "string" || typeof m.id === "number") && Object.keys(m).length === 3)
    return `{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":${text}}`;
  let out = "";
  for (const key of Object.keys(m)) {
    const json = key === "result" ? text : JSON.stringify((m as Record<string, unknown>)[key]);
    if (json === undefined) continue; // as JSON.stringify leaves out an undefined member
    out += `${out === "" ? "{" : ","}${JSON.stringify(key)}:${json}`;
  }
  return `${out}}`;
}

/**
 * The text `result` arrived in, when it is at hand and worth using: the answer being delivered right now
 * ({@link deliverKept}), or one whose text was kept. Undefined as for {@link keptResultText}, and for an
 * answer under `PROTOCOL_DEFAULTS.keepResultMinChars`: a relay that changes so small a result encodes it
 * again for less than finding and splicing its text costs (measured: 20-byte texts +60%, 100 KB ones 3x less).
 */
export function resultTextOf(result: object): string | undefined {
  if (result !== deliveringResult) return keptResultText(result);
  const line = deliveringLine;
  if (line.length < PROTOCOL_DEFAULTS.keepResultMinChars || line.includes("\r")) return undefined;
  return memberText(line, "result");
}

/**
 * Makes `text` the text {@link encodeRelayed} writes for `result`, an object the caller made whose JSON is
 * exactly `text` (a relay that adds members to a server's result, writing them before the server's own
 * text, as {@link withMembersFirst} does). `text` must hold no raw line break.
 */
export function keepMadeText(result: object, text: string): void {
  LINES.set(result, `{"result":${text}}`);
}

/**
 * The JSON object `text` with `members` written first (each encoded with `JSON.stringify`), the rest of
 * the text as it was; undefined when `text` is no object (a broken server's array: the caller encodes its
 * result afresh). The caller makes sure none of the names is a member of `text` already.
 */
export function withMembersFirst(text: string, members: Record<string, unknown>): string | undefined {
  let i = 0;
  while (isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 0x7b) return undefined;
  let head = "";
  for (const key of Object.keys(members)) head += `${head === "" ? "" : ","}${JSON.stringify(key)}:${JSON.stringify(members[key])}`;
  i++;
  while (isSpace(text.charCodeAt(i))) i++;
  return text.charCodeAt(i) === 0x7d ? `{${head}}` : `{${head},${text.slice(i)}`;
}

/** {@link encodeRelayed} as one JSONL line (the same text and a `\n`), as `encodeLine` is to `JSON.stringify`. */
export function encodeRelayedLine(message: unknown): string {
  return `${encodeRelayed(message)}\n`;
}

/** The kept text of `message.result`, when `message` is an object whose result has one. */
function keptTextOf(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const result = (message as { result?: unknown }).result;
  return typeof result === "object" && result !== null ? keptResultText(result) : undefined;
}

/** Whether `m` has exactly the members `jsonrpc`, `id` and `result` (and no other). */
function plainAnswer(m: Record<string, unknown>): boolean {
  let n = 0;
  for (const key in m) {
    if (key !== "jsonrpc" && key !== "id" && key !== "result") return false;
    n++;
  }
  return n === 3 && m.jsonrpc === "2.0";
}

/** The index of the one occurrence of `needle` in `text`, or -1 when it occurs never or more than once. */
function onlyAt(text: string, needle: string): number {
  const at = text.indexOf(needle);
  return at >= 0 && text.indexOf(needle, at + needle.length) < 0 ? at : -1;
}

/**
 * The answer being delivered ({@link deliverKept}) with only its id rewritten, when `message` is that
 * answer for another id: the server's line exactly as written but for the id's value (the issue is to
 * pass an answer on, not to encode it again: this costs a few `indexOf` over the line instead of a
 * `JSON.stringify` of it). Only for a line that is plainly `jsonrpc`, `id` and `result`, each written
 * once and no name with an escape (the one `"id"` in it is then the member), and without a raw CR.
 */
function splicedAnswer(message: unknown): string | undefined {
  const original = deliveringMessage;
  if (original === undefined || typeof message !== "object" || message === null) return undefined;
  const m = message as Record<string, unknown>;
  if (m.result !== deliveringResult || (typeof m.id !== "string" && typeof m.id !== "number") || !plainAnswer(m) || !plainAnswer(original))
    return undefined;
  const line = deliveringLine;
  const at = onlyAt(line, '"id"');
  if (at < 0 || onlyAt(line, '"result"') < 0 || onlyAt(line, '"jsonrpc"') < 0 || line.includes("\\u") || line.includes("\r"))
    return undefined;
  let i = at + 4;
  while (isSpace(line.charCodeAt(i))) i++;
  if (line.charCodeAt(i) !== 0x3a) return undefined; // `:`
  i++;
  while (isSpace(line.charCodeAt(i))) i++;
  return `${line.slice(0, i)}${JSON.stringify(m.id)}${line.slice(valueEnd(line, i))}`;
}
