/**
 * Docs and comments stand alone: nothing under docs/, README.md, <pkg>/src, <pkg>/test or tests/ points
 * at design notes kept outside this repository (a `seed/000_*.txt` series or a `shared/` folder beside the
 * checkout). The design is described in the repository's own words (docs/architecture.md).
 *
 * The check is a pure function over file contents, so the same test proves it fails on synthetic text
 * before it passes on the real tree. A random-number seed (`FUZZ_SEED`, `--seed`) is not a reference.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const FORBIDDEN = ["seed-contract", "shared/seed", "seed/000"];
/** `../shared`: forbidden unless it names a directory that exists inside the repository. */
const SHARED_UP = /(?:\.\.\/)+shared\b/g;

export interface OutsideReference {
  file: string;
  line: number;
  text: string;
}

/** Every line of one file that refers to outside notes, with what it names; `file` is relative to `root`, posix separators. */
export function findOutsideReferences(root: string, file: string, content: string): OutsideReference[] {
  const found: OutsideReference[] = [];
  content.split("\n").forEach((lineText, i) => {
    const hits = FORBIDDEN.filter((f) => lineText.toLowerCase().includes(f));
    for (const match of lineText.matchAll(SHARED_UP)) {
      const target = path.resolve(root, path.dirname(file), match[0]);
      const inside = target.startsWith(root + path.sep) && existsSync(target);
      if (!inside) hits.push(match[0]);
    }
    if (hits.length > 0) found.push({ file, line: i + 1, text: `${hits.join(", ")}: ${lineText.trim().slice(0, 160)}` });
  });
  return found;
}

const SKIP_DIRS = new Set(["node_modules", "dist", "coverage", "out"]);
const TEXT = /\.(?:ts|mts|cts|js|mjs|cjs|json|md|txt|sh|yaml|yml)$/;

function walk(dir: string, out: string[]): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".") || SKIP_DIRS.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (entry.isFile() && TEXT.test(entry.name)) out.push(full);
  }
  return out;
}

/** docs/, README.md, every workspace package's src/ and test/, and tests/. */
function filesToCheck(): string[] {
  const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { workspaces: string[] };
  const dirs = ["docs", "tests", ...manifest.workspaces.flatMap((w) => [path.join(w, "src"), path.join(w, "test")])];
  const files = [path.join(ROOT, "README.md")];
  for (const dir of dirs) if (existsSync(path.join(ROOT, dir))) walk(path.join(ROOT, dir), files);
  // This file names what it forbids.
  const self = path
    .relative(ROOT, fileURLToPath(import.meta.url))
    .split(path.sep)
    .join("/");
  return [...new Set(files)].map((f) => path.relative(ROOT, f).split(path.sep).join("/")).filter((f) => f !== self);
}

describe("docs stand alone", () => {
  it("the check finds each kind of outside reference, and leaves random seeds and in-repo folders alone", () => {
    const text = [
      "see shared/Seed-Contract.md",
      "the seed/000_intro.txt file",
      "as in ../../shared/notes.md",
      "const seed = Number(process.env.FUZZ_SEED); // a random seed",
      "nothing here",
    ].join("\n");
    const found = findOutsideReferences(ROOT, "docs/page.md", text);
    expect(found.map((f) => f.line)).toEqual([1, 2, 3]);
    expect(found[0]!.text).toMatch(/^seed-contract, shared\/seed: see shared/);
    expect(found[2]!.text).toMatch(/^\.\.\/\.\.\/shared: /);
    // ../shared is fine where it names a folder inside the repository, and only there.
    const root = mkdtempSync(path.join(tmpdir(), "mcpd-docs-"));
    try {
      mkdirSync(path.join(root, "pkg", "src", "shared"), { recursive: true });
      expect(findOutsideReferences(root, "pkg/src/x/y.ts", "import { z } from '../shared/z.js';")).toEqual([]);
      expect(findOutsideReferences(root, "pkg/src/y.ts", "import { z } from '../shared/z.js';")).toHaveLength(1);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("no file under docs/, README.md, */src, */test or tests/ points at notes outside the repository", () => {
    const files = filesToCheck();
    expect(files).toContain("README.md");
    expect(files).toContain("docs/architecture.md");
    expect(files).toContain("protocol/src/errors.ts");
    expect(files).toContain("tests/layering.test.ts");
    const found = files.flatMap((f) => findOutsideReferences(ROOT, f, readFileSync(path.join(ROOT, f), "utf8")));
    expect(found.map((f) => `${f.file}:${f.line}: ${f.text}`)).toEqual([]);
  });
});
