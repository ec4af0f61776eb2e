/** Bytes kept from the end of each stdout chunk: where the id of an oversized response is looked for. */
export const TAIL_BYTES = 128;

/** `{"jsonrpc":"2.0","id":7,` or `{"id":7,` at the start of a line: the id of a response written id-first. */
const HEAD_ID = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(\d+)\s*,/;
/** `"id":7}` or `"id":7,"jsonrpc":"2.0"}` closing a line: the id of a response written result-first (the TS SDK's order). */
const TAIL_ID = /"id"\s*:\s*(\d+)\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$/;

/**
 * The top-level id of a line too large to parse, from its first and last bytes, when either shows it
 * unambiguously (a nested `"id"` never matches: the head pattern needs it to be the first key, the tail
 * pattern needs exactly one closing brace after it).
 */
export function oversizedLineId(head: string, tail: string): number | undefined {
  const m = HEAD_ID.exec(head) ?? TAIL_ID.exec(tail);
  return m ? Number(m[1]) : undefined;
}
