/**
 * `mcpd dashboard` starts the browser on a private page that forwards to the one-time login link, never on
 * the link itself: a program's command line is readable by every local user (/proc/<pid>/cmdline), who
 * could use the link first. The browser here is a stand-in ($BROWSER) that records what it was given.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCPD_BIN, type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { httpFront } from "../http/http-harness.js";
import { commandEnv } from "./dashboard-harness.js";

let d: TestDaemon;
let dir: string;
beforeAll(async () => {
  d = await startTestDaemon({ fx: fixture("fx") });
  await httpFront(d);
  dir = mkdtempSync(join(tmpdir(), "mcpd-browser-"));
});
afterAll(async () => {
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("mcpd dashboard", () => {
  it("regression: gives the browser a private page forwarding to the login link, not the link (it was in xdg-open's and the browser's command line)", async () => {
    const recorder = join(dir, "browser.mjs");
    const seen = join(dir, "seen.txt");
    writeFileSync(
      recorder,
      `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(seen)}, process.argv.slice(2).join("\\n"));\n`,
    );
    const env = { ...commandEnv(d), BROWSER: `${process.execPath} ${recorder}` };
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [MCPD_BIN, "dashboard"], { env }, (err, stdout, stderr) =>
        err ? reject(new Error(stderr)) : resolve(stdout),
      ),
    );
    expect(out).toContain("Opened the dashboard with $BROWSER");
    const arg = await until(() => {
      try {
        return readFileSync(seen, "utf8");
      } catch {
        return undefined;
      }
    }, "the stand-in browser to run");
    expect(arg).toMatch(/^file:\/\//);
    expect(arg).not.toContain("ticket");
    const page = fileURLToPath(arg);
    expect(statSync(page).mode & 0o777).toBe(0o600);
    const link = /http-equiv="refresh" content="0;url=([^"]+)"/.exec(readFileSync(page, "utf8"))?.[1]?.replaceAll("&#38;", "&");
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/dashboard\/login\?/);
    // The page's link logs in (once).
    expect((await fetch(link as string, { redirect: "manual" })).status).toBe(303);
  });
});
