/**
 * Tool selection in the config: a server's own `tools` / `prompts` / `resources` filters and
 * `mcpd.profiles`, validated with errors that name the place and the value; the glob syntax; and the
 * compiled forms the router checks with (NameFilter, ViewFilter, Profiles).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConfigError } from "@mcpd/protocol";
import { diffConfigs, parseConfig } from "../../src/config/index.js";
import { compileGlobs, globProblem, hasWildcard, literalGlob } from "../../src/config/globs.js";
import { NameFilter } from "../../src/router/name-filter.js";
import { Profiles } from "../../src/router/profiles.js";

const FILE = "/cfg/config.json";
const parse = (doc: unknown) => parseConfig(JSON.stringify(doc), FILE, { HOME: "/home/u" });
const errorsOf = (doc: unknown): string[] => {
  try {
    parse(doc);
  } catch (err) {
    if (err instanceof ConfigError) return err.message.split("\n");
    throw err;
  }
  throw new Error("expected the config to be refused");
};
const server = (extra: Record<string, unknown> = {}) => ({ command: "node", args: ["s.js"], ...extra });

describe("globs", () => {
  it("`*` is any run, `?` one character, `\\` escapes; a glob matches the whole name, case-sensitively", () => {
    const f = NameFilter.compile({ include: ["github__*", "a?c", "lit\\*", "x.y"] }) as NameFilter;
    expect(["github__search", "github__", "abc", "a-c", "lit*", "x.y"].map((n) => f.allows(n))).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(["xgithub__search", "GITHUB__x", "ac", "abbc", "litx", "xzy", "a.c.d"].map((n) => f.allows(n))).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it("matches exactly as the glob's meaning (a RegExp of it, on short names) says, for any glob and name", () => {
    // A reference for short inputs only: a backtracking RegExp is exponential on long ones.
    const reference = (glob: string, name: string): boolean => {
      let src = "";
      let escaped = false;
      for (const ch of glob) {
        if (escaped || (ch !== "*" && ch !== "?" && ch !== "\\")) src += ch.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
        else if (ch === "\\") {
          escaped = true;
          continue;
        } else src += ch === "*" ? "[\\s\\S]*" : "[\\s\\S]";
        escaped = false;
      }
      return new RegExp(`^${src}$`, "u").test(name);
    };
    const alphabet = fc.constantFrom("a", "b", "_", "*", "?", "\\", "é", "😀");
    const glob = fc
      .array(alphabet, { maxLength: 8 })
      .map((a) => a.join(""))
      .filter((g) => globProblem(g) === undefined);
    const name = fc.array(fc.constantFrom("a", "b", "_", "*", "?", "\\", "é", "😀"), { maxLength: 10 }).map((a) => a.join(""));
    fc.assert(
      fc.property(glob, name, (g, n) => compileGlobs([g])(n) === reference(g, n)),
      { numRuns: 3000 },
    );
  });

  it("regression: a glob of many stars against a long name is matched in linear time (a backtracking RegExp took seconds for 6 stars on 60 characters)", () => {
    const long = "a".repeat(20_000);
    expect(compileGlobs([`${"*a".repeat(50)}*b`])(long)).toBe(false);
    expect(compileGlobs([`${"*a".repeat(50)}*`])(long)).toBe(true);
    const f = NameFilter.compile({ include: [`${"*a".repeat(100)}*b`], exclude: [`*${"?".repeat(200)}*c`] }) as NameFilter;
    expect(f.allows(`${long}b`)).toBe(true);
  });

  it("exclude wins over include; no include list means every name", () => {
    const f = NameFilter.compile({ include: ["a__*"], exclude: ["a__delete_*"] }) as NameFilter;
    expect([f.allows("a__read"), f.allows("a__delete_repo"), f.allows("b__read")]).toEqual([true, false, false]);
    const only = NameFilter.compile({ exclude: ["*secret*"] }) as NameFilter;
    expect([only.allows("read"), only.allows("get_secret_value")]).toEqual([true, false]);
    expect(NameFilter.compile({ exclude: [] })).toBeUndefined();
    expect(NameFilter.compile(undefined)).toBeUndefined();
  });

  it("remembers verdicts, which stay right for every name asked (the memory is a cache, not a filter)", () => {
    const f = NameFilter.compile({ include: ["t_1*"] }) as NameFilter;
    // More names than the memory holds (10,000), twice over: it starts over and stays right.
    const wrong: string[] = [];
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 12_000; i++) if (f.allows(`t_${i}`) !== String(i).startsWith("1")) wrong.push(`t_${i}`);
    }
    expect(wrong).toEqual([]);
  });

  it("names the globs that match none of the names given", () => {
    const f = NameFilter.compile({ include: ["a__*", "zz*"], exclude: ["a__delte"] }) as NameFilter;
    expect(f.unmatched("include", [["a__x"], ["b__y"]])).toEqual(["zz*"]);
    expect(f.unmatched("exclude", [["a__x"]])).toEqual(["a__delte"]);
  });

  it("literalGlob escapes exactly the wildcard characters; a lone trailing backslash is not a glob", () => {
    expect(literalGlob("a*b?c\\d")).toBe("a\\*b\\?c\\\\d");
    const f = NameFilter.compile({ include: [literalGlob("we*ird?")] }) as NameFilter;
    expect([f.allows("we*ird?"), f.allows("weXirdY")]).toEqual([true, false]);
    expect(globProblem("ok\\")).toMatch(/lone "\\"/);
    expect(globProblem("ok\\\\")).toBeUndefined();
    expect(globProblem("")).toMatch(/empty/);
    expect([hasWildcard("a*"), hasWildcard("a\\*"), hasWildcard("a?")]).toEqual([true, false, true]);
  });
});

describe("a server's filters in the config", () => {
  it("are read into the resolved server, change its hash (a reload sees it changed) but not its transport hash", () => {
    const plain = parse({ mcpServers: { a: server() } });
    const filtered = parse({
      mcpServers: {
        a: server({
          tools: { include: ["read_*"], exclude: ["read_secret"] },
          prompts: { exclude: ["x"] },
          resources: { include: ["file:///*"] },
        }),
      },
    });
    expect(plain.servers[0]?.filters).toBeUndefined();
    expect(filtered.servers[0]?.filters).toEqual({
      tools: { include: ["read_*"], exclude: ["read_secret"] },
      prompts: { exclude: ["x"] },
      resources: { include: ["file:///*"] },
    });
    expect(filtered.servers[0]?.transportHash).toBe(plain.servers[0]?.transportHash);
    expect(diffConfigs(plain, filtered).changed).toEqual(["a"]);
    expect(plain.warnings).toEqual([]);
  });

  it("refuses bad filters naming the server, the key and the value", () => {
    const errors = errorsOf({
      mcpServers: {
        a: server({ tools: ["read_*"] }),
        b: server({ tools: { include: "read_*" } }),
        c: server({ prompts: { exclude: ["ok", 3] } }),
        d: server({ resources: { include: ["bad\\"] } }),
        e: server({ tools: { include: ["x".repeat(300)] } }),
      },
    });
    expect(errors).toEqual([
      `${FILE}: server "a": "tools" must be an object such as {"include": ["search_*"], "exclude": ["delete_*"]}, got an array (["read_*"])`,
      `${FILE}: server "b": "tools.include" must be an array of glob strings such as ["github__*"], got "read_*"`,
      `${FILE}: server "c": "prompts.exclude[1]" must be a glob string such as "github__*", got 3`,
      `${FILE}: server "d": "resources.include[0]" "bad\\\\" is not a usable glob: it ends with a lone "\\" (write "\\\\" for a backslash)`,
      `${FILE}: server "e": "tools.include[0]" "${"x".repeat(80)}" is not a usable glob: longer than 256 characters`,
    ]);
  });

  it("warns about an unknown key of a filter with a hint, and about an empty include list", () => {
    const cfg = parse({ mcpServers: { a: server({ tools: { allow: ["x"], include: [] } }) } });
    expect(cfg.warnings).toEqual([
      `${FILE}: server "a": unknown key "tools.allow" ignored (did you mean "include"?)`,
      `${FILE}: server "a": "tools.include" is empty: nothing is included, so every item is hidden`,
    ]);
  });
});

describe("mcpd.profiles", () => {
  it("reads each profile's servers and filters", () => {
    const cfg = parse({
      mcpd: {
        profiles: { coding: { servers: ["github", "fs"], tools: { include: ["github__*"] } }, research: { prompts: { exclude: ["*"] } } },
      },
      mcpServers: { github: server(), fs: server() },
    });
    expect(cfg.settings.profiles).toEqual({
      coding: { servers: ["github", "fs"], tools: { include: ["github__*"] } },
      research: { prompts: { exclude: ["*"] } },
    });
    expect(cfg.warnings).toEqual([]);
  });

  it("refuses an unknown server (with a hint and the configured ones), a bad name, a profile that is not an object", () => {
    const errors = errorsOf({
      mcpd: { profiles: { coding: { servers: ["githbu"] }, "bad name": {}, x: [], y: { servers: "github" } } },
      mcpServers: { github: server(), fs: server() },
    });
    expect(errors).toEqual([
      `${FILE}: profile "coding": "servers" names "githbu", which is not a configured server (did you mean "github"?); configured: github, fs`,
      `${FILE}: profile "bad name": invalid name: use 1 to 48 letters, digits, "_" or "-"`,
      `${FILE}: profile "x": must be an object such as {"servers": ["github"], "tools": {"include": ["github__*"]}}, got an empty array`,
      `${FILE}: profile "y": "servers" must be an array of configured server names, got "github"`,
    ]);
    expect(errorsOf({ mcpd: { profiles: [] } })).toEqual([
      `${FILE}: "mcpd.profiles": must be an object mapping profile names to profiles such as {"coding": {"servers": ["github"]}}, got an empty array`,
    ]);
  });

  it("warns about an unknown key in a profile, with a hint", () => {
    const cfg = parse({ mcpd: { profiles: { p: { tool: { include: ["a"] } } } }, mcpServers: {} });
    expect(cfg.warnings).toEqual([`${FILE}: profile "p": unknown key "tool" ignored (did you mean "tools"?)`]);
    expect(cfg.settings.profiles).toEqual({ p: {} });
  });
});

describe("Profiles", () => {
  it("reports, per profile, the kinds whose view changed, and keeps an unchanged profile's compiled form", () => {
    const p = new Profiles();
    p.update({ a: { servers: ["x"], tools: { include: ["x__*"] } }, b: { prompts: { exclude: ["p"] } } });
    const aBefore = p.get("a");
    const changed = p.update({ a: { tools: { include: ["x__*"] }, servers: ["x"] }, b: { prompts: { exclude: ["q"] } }, c: {} });
    expect(Object.fromEntries([...changed].map(([k, v]) => [k, [...v]]))).toEqual({ b: ["prompts"] });
    expect(p.names()).toEqual(["a", "b", "c"]);
    expect(p.get("a")).toBe(aBefore);
    // Changing a profile's servers changes every kind; removing one too. A new profile has nobody to tell.
    const again = p.update({ a: { servers: ["y"], tools: { include: ["x__*"] } }, d: {} });
    expect(Object.fromEntries([...again].map(([k, v]) => [k, [...v]]))).toEqual({
      a: ["tools", "prompts", "resources"],
      b: ["tools", "prompts", "resources"],
      c: ["tools", "prompts", "resources"],
    });
  });

  it("selects a view filter; an unknown profile names the configured ones; resources match by either URI form", () => {
    const p = new Profiles();
    p.update({ docs: { servers: ["a"], resources: { include: ["mcpd://a/file:///docs/*"] } } });
    expect(() => p.select("nope", undefined)).toThrow('Unknown profile "nope"; configured (mcpd.profiles): docs');
    expect(p.select(undefined, undefined)).toBeUndefined();
    const f = p.select("docs", ["a__*"]);
    expect(f?.allowsResource("a", "file:///docs/x")).toBe(true);
    expect(f?.allowsResource("a", "file:///src/x")).toBe(false);
    expect(f?.allowsResource("b", "file:///docs/x")).toBe(false);
    expect([f?.allowsTool("a", "a__read"), f?.allowsTool("a", "b__read"), f?.allowsTool("b", "a__x")]).toEqual([true, false, false]);
    // Gone from the config: sees nothing.
    p.update({});
    const gone = p.refresh(f as NonNullable<typeof f>);
    expect([gone.viewsServer("a"), gone.allowsTool("a", "a__read")]).toEqual([false, false]);
    expect(gone.hidden("tool", "a__read", "a").message).toContain(`profile "docs" is no longer in mcpd's config`);
  });
});
