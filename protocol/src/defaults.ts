/** Defaults of the protocol layer, in one place. Units are in the names. */
export const PROTOCOL_DEFAULTS = {
  /** Largest newline-delimited JSON line accepted, in bytes (4 MiB). Longer lines are dropped and reported. */
  maxLineBytes: 4 * 1024 * 1024,
  /** How much of a bad line is kept for logs and error messages, in bytes. */
  previewBytes: 200,
} as const;
