/** Byte-level helpers of the SSE reader (sse.ts): field names compared as bytes, a line's pieces joined. */

const encoder = new TextEncoder();

/** Up to this many bytes, an ASCII value is made a string by hand (see SseReader.text). */
export const SHORT_TEXT_BYTES = 64;

const FIELD_NAMES = ["data", "event", "id", "retry"] as const;
const FIELD_BYTES = FIELD_NAMES.map((n) => encoder.encode(n));

/** Which of the four fields `bytes[start..end)` names, if any. */
export function fieldName(bytes: Uint8Array, start: number, end: number): (typeof FIELD_NAMES)[number] | undefined {
  const length = end - start;
  for (let f = 0; f < FIELD_NAMES.length; f++) {
    const name = FIELD_BYTES[f] as Uint8Array;
    if (name.length !== length) continue;
    let i = 0;
    while (i < length && bytes[start + i] === name[i]) i++;
    if (i === length) return FIELD_NAMES[f];
  }
  return undefined;
}

export function concat(parts: readonly Uint8Array[], tail: Uint8Array): Uint8Array {
  const size = parts.reduce((n, p) => n + p.length, tail.length);
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of [...parts, tail]) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
