/**
 * The Node 22 the conformance suite 0.2.x runs on (tests/helpers/node22-setup.ts): installed outside the
 * workspace, it runs the suite, and npm scripts still run on the machine's Node.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, inject, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const SUITE = join(dirname(createRequire(import.meta.url).resolve("conformance-2026/package.json")), "dist/index.js");
const node22 = inject("node22");

describe.skipIf("skip" in node22)(`Node 22 for the conformance suite${"skip" in node22 ? ` (skipped: ${node22.skip})` : ""}`, () => {
  const binary = "path" in node22 ? node22.path : "";

  it("is a Node 22 that lists the suite's 2026-07-28 server scenarios", () => {
    expect(execFileSync(binary, ["--version"], { encoding: "utf8" }).trim()).toMatch(/^v22\./);
    const listed = execFileSync(binary, [SUITE, "list", "--server", "--requirements", "2026-07-28"], { encoding: "utf8" });
    expect(listed).toContain("input-required-result-basic-elicitation");
  });

  it("is installed outside the workspace's bin directory, which still runs the machine's Node", () => {
    expect(binary.startsWith(join(ROOT, "node_modules/.cache/"))).toBe(true);
    expect(existsSync(join(ROOT, "node_modules/.bin/node"))).toBe(false);
  });
});
