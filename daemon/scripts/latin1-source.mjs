/** Used by bundle-cli.mjs on every file it writes. */

/**
 * `code` with every character above U+00FF written as a `\uXXXX` escape. V8 holds a script's source as
 * one string, and one such character anywhere (a `…` in a message) makes it two bytes per character:
 * the daemon's largest chunk then costs twice its size for as long as the daemon runs. The escape means
 * the same in string, template and regular expression literals, identifiers and comments.
 */
export function latin1Source(code) {
  return code.replace(/[\u0100-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
