import { describe, expect, it } from "vitest";
import { closeMatches, quoted } from "../../src/router/close-matches.js";

const TOOLS = [
  "fx__echo",
  "fx__add",
  "fx__noise",
  "gx__echo",
  "gx__add",
  "github__create_issue",
  "github__search_repositories",
  ...Array.from({ length: 70 }, (_, i) => `fx__extra_${i}`),
];

describe("closeMatches (suggestions of unknown-name errors)", () => {
  it("puts a typo of an exposed name first, then the same tool on other servers", () => {
    expect(closeMatches("fx__ecoh", TOOLS)).toEqual(["fx__echo", "gx__echo"]);
    expect(closeMatches("github__crate_issue", TOOLS)).toEqual(["github__create_issue"]);
  });

  it("finds a server's own tool name typed without its prefix", () => {
    expect(closeMatches("add", TOOLS)).toEqual(["fx__add", "gx__add"]);
    expect(closeMatches("search_repositories", TOOLS)).toEqual(["github__search_repositories"]);
  });

  it("never returns more than five, and nothing for a name close to none", () => {
    expect(closeMatches("fx__extra_", TOOLS)).toHaveLength(5);
    expect(closeMatches("zzzzzzzzzzzz", TOOLS)).toEqual([]);
    expect(closeMatches("", TOOLS)).toEqual([]);
  });

  it("stays bounded for a huge name, and quotes it cut down", () => {
    const huge = "x".repeat(1_000_000);
    expect(closeMatches(huge, TOOLS)).toEqual([]);
    expect(quoted(huge).length).toBeLessThan(260);
    expect(quoted(huge)).toContain("(1000000 characters)");
    expect(quoted("fx__echo")).toBe('"fx__echo"');
  });
});
