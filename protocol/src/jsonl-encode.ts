/** The encoding side of newline-delimited JSON; the decoder is `jsonl.ts`. */

/**
 * Encodes one message as exactly one line. `JSON.stringify` escapes every `\n` and `\r` inside strings,
 * so the only `\n` is the terminator (U+2028/U+2029 stay raw: they are not line breaks in JSONL).
 *
 * @throws TypeError when the value has no JSON form (`undefined`, a function, a symbol), or whatever
 * `JSON.stringify` throws (BigInt, cycles).
 */
export function encodeLine(message: unknown): string {
  const json = JSON.stringify(message) as string | undefined;
  if (json === undefined) throw new TypeError(`encodeLine: a ${typeof message} has no JSON form`);
  return json + "\n";
}
