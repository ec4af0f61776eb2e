/**
 * Remote or user text (a server's reply, a name a client sent, a header) quoted into an error message or
 * a log line, cut to at most `maxChars` UTF-16 units so that no peer can make mcpd's messages as long as it
 * likes. A cut never splits a surrogate pair (half a character would be written as U+FFFD). `marker`, when
 * given, is appended to a text that was cut (`"..."`), so a reader can tell. The bounds are named in
 * `PROTOCOL_DEFAULTS` (`quotedNameChars`, `quotedTextChars`, ...).
 */
export function quote(text: string, maxChars: number, marker = ""): string {
  if (text.length <= maxChars) return text;
  let end = Math.max(0, maxChars);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end) + marker;
}
