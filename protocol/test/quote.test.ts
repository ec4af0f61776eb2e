/**
 * quote(): the one bound on remote or user text quoted into an error message or a log line (it was
 * `.slice(0, N)` written out at each site, with N chosen anew each time).
 */
import { describe, expect, it } from "vitest";
import { PROTOCOL_DEFAULTS } from "../src/defaults.js";
import { quote } from "../src/quote.js";

describe("quote", () => {
  it.each<[string, string, number, string | undefined, string]>([
    ["a text within the bound, unchanged", "abc", 3, undefined, "abc"],
    ["an empty text", "", 5, undefined, ""],
    ["a longer text, cut at the bound", "abcdef", 3, undefined, "abc"],
    ["a longer text, cut and marked", "abcdef", 3, "...", "abc..."],
    ["a text within the bound is never marked", "abc", 3, "...", "abc"],
    ["a bound of 0", "abc", 0, undefined, ""],
    // "a😀b": the emoji is two UTF-16 units; a cut between them would leave half a character.
    ["a cut inside a surrogate pair drops the half", "a\u{1F600}b", 2, undefined, "a"],
    ["a cut after a surrogate pair keeps it", "a\u{1F600}b", 3, undefined, "a\u{1F600}"],
  ])("%s", (_title, text, max, marker, expected) => {
    expect(quote(text, max, marker)).toBe(expected);
  });

  it("never returns more than the bound and the marker", () => {
    for (const max of [0, 1, 2, 40, 100]) {
      const text = "\u{1F600}x".repeat(100);
      expect(quote(text, max).length).toBeLessThanOrEqual(max);
      expect(quote(text, max, "...").length).toBeLessThanOrEqual(max + 3);
    }
  });

  it("has its bounds in the protocol's defaults, each a positive number of characters", () => {
    const bounds = [
      PROTOCOL_DEFAULTS.quotedNameChars,
      PROTOCOL_DEFAULTS.quotedGlobChars,
      PROTOCOL_DEFAULTS.quotedTextChars,
      PROTOCOL_DEFAULTS.quotedDescriptionChars,
      PROTOCOL_DEFAULTS.previewBytes,
    ];
    for (const b of bounds) expect(Number.isSafeInteger(b) && b > 0).toBe(true);
  });
});
