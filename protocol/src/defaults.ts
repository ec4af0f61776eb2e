/** Defaults of the protocol layer, in one place. Units are in the names. */
export const PROTOCOL_DEFAULTS = {
  /** Largest newline-delimited JSON line accepted, in bytes (4 MiB). Longer lines are dropped and reported. */
  maxLineBytes: 4 * 1024 * 1024,
  /** How much of a bad line is kept for logs and error messages, in bytes. */
  previewBytes: 200,
  /**
   * Shortest line whose answer's result text a `keepResults` decoder keeps for relays after its delivery,
   * in characters (while it is delivered, every answer's line is at hand: `deliverKept`). Below it,
   * encoding a result again costs no more than finding it in its text (measured: the same CPU per relayed
   * call either way) and keeping it costs a WeakMap entry; from a few KB on, passing the text on is
   * several times cheaper (~4x at 100 KB).
   */
  keepResultMinChars: 1024,
} as const;
