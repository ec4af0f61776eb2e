/** Defaults of the protocol layer, in one place. Units are in the names. */
export const PROTOCOL_DEFAULTS = {
  /** Largest newline-delimited JSON line accepted, in bytes (4 MiB). Longer lines are dropped and reported. */
  maxLineBytes: 4 * 1024 * 1024,
  /** How much of a bad line is kept for logs and error messages, in bytes. */
  previewBytes: 200,
  /**
   * How much of a name or code sent by someone else (a server, tool or profile name, a method, an OAuth
   * error code) is quoted into an error message or a log line, in characters (`quote()`).
   */
  quotedNameChars: 100,
  /** How much of a glob someone wrote (a config filter, a connection's tool selection) is quoted, in characters. */
  quotedGlobChars: 80,
  /** How much of a longer text (a URL, an issuer, a reply body, a command line) is quoted, in characters. */
  quotedTextChars: 200,
  /** How much of a description written by a remote party (an OAuth `error_description`, an error page) is quoted, in characters. */
  quotedDescriptionChars: 300,
  /**
   * Shortest line whose answer's result text a `keepResults` decoder keeps for relays after its delivery,
   * in characters (while it is delivered, every answer's line is at hand: `deliverKept`). Below it,
   * encoding a result again costs no more than finding it in its text (measured: the same CPU per relayed
   * call either way) and keeping it costs a WeakMap entry; from a few KB on, passing the text on is
   * several times cheaper (~4x at 100 KB).
   */
  keepResultMinChars: 1024,
} as const;
