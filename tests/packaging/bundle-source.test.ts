/**
 * What the bundled `mcpd` command holds as source text, which the daemon keeps in memory for as long as it
 * runs: no doc comments, and only Latin-1 characters (regression: one `…` in a message made V8 hold the
 * daemon's largest chunk as a two-byte string, twice its size). A bundled npm package ships its licence.
 * pino is bundled without its transports (worker threads), which the daemon never runs.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUNDLED_LOGGER_PACKAGES } from "../../daemon/scripts/bundle-stubs.mjs";
import { latin1Source } from "../../daemon/scripts/latin1-source.mjs";
import { ROOT } from "../cli/cli-harness.js";

const BUNDLE = join(ROOT, "daemon", "dist", "cli-bundle");
const chunks = (): string[] => readdirSync(BUNDLE).filter((f) => f.endsWith(".cjs"));

describe("latin1Source", () => {
  it("escapes every character above U+00FF, and the escaped code means the same", () => {
    const code = 'const a = "…[truncated]"; const b = `→ ${a}`; const r = /[—…]/; const e = /😀/u; const l = "é×µ";';
    const out = latin1Source(code);
    expect([...out].every((c) => (c.codePointAt(0) as number) <= 0xff)).toBe(true);
    expect(out).toContain("\\u2026[truncated]");
    // Latin-1 is one byte per character already: left as it is.
    expect(out).toContain('"é×µ"');
    const run = (src: string) => new Function(`${src} return [a, b, r.test("x…"), e.test("😀"), l];`)();
    expect(run(out)).toEqual(run(code));
    expect(run(out)).toEqual(["…[truncated]", "→ …[truncated]", true, true, "é×µ"]);
  });
});

describe("the bundled command's files", () => {
  it("hold only Latin-1 characters", () => {
    expect(chunks().length).toBeGreaterThan(3);
    for (const f of chunks()) {
      const text = readFileSync(join(BUNDLE, f), "utf8");
      const wide = [...text].find((c) => (c.codePointAt(0) as number) > 0xff);
      expect(wide, `${f} holds ${JSON.stringify(wide)}`).toBeUndefined();
    }
  });

  it("hold no doc comments (src/ ships beside them for readers)", () => {
    for (const f of chunks()) expect(readFileSync(join(BUNDLE, f), "utf8"), f).not.toMatch(/^\s*\/\*\*\s/m);
  });

  it("ship the licence of every npm package bundled into them", () => {
    const manifest = JSON.parse(readFileSync(join(BUNDLE, "modules.json"), "utf8")) as Record<string, string[]>;
    const bundled = new Set(
      Object.values(manifest)
        .flat()
        .map((m) => /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(m)?.[1])
        .filter((name): name is string => name !== undefined),
    );
    expect([...bundled].sort()).toEqual(
      ["jsonc-parser", "p-queue", "p-timeout", "eventemitter3", "oauth4webapi", ...BUNDLED_LOGGER_PACKAGES].sort(),
    );
    const notices = readFileSync(join(BUNDLE, "THIRD-PARTY-NOTICES.md"), "utf8");
    for (const name of bundled) {
      const { version } = JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string };
      expect(notices).toContain(`## ${name} ${version}`);
    }
    expect(notices).toContain("Permission is hereby granted, free of charge");
  });

  it("leave pino's transports out: no worker thread, thread-stream or node:module, and no node:assert for sonic-boom (regression: ~0.5 MB of the daemon's memory)", () => {
    const manifest = JSON.parse(readFileSync(join(BUNDLE, "modules.json"), "utf8")) as Record<string, string[]>;
    const modules = Object.values(manifest).flat();
    expect(
      modules.filter((m) => /node_modules\/(thread-stream|real-require|pino-abstract-transport)\/|pino\/lib\/(transport|worker)/.test(m)),
    ).toEqual([]);
    for (const f of chunks()) {
      const text = readFileSync(join(BUNDLE, f), "utf8");
      expect(text.match(/require\("(?:node:)?(worker_threads|assert|module)"\)/g), f).toBeNull();
    }
    expect(modules).toContain("node_modules/pino/pino.js");
  });
});
