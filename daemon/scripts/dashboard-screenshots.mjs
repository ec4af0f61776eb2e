#!/usr/bin/env node
/**
 * Screenshots of the dashboard's main views for the docs (`npm run screenshots`; not part of the tests):
 * starts a daemon in a temporary home with three fixture servers, logs in through `mcpd dashboard
 * --print-url`, runs a few calls (and a few refused ones) so the charts move, and writes docs/dashboard-light.png,
 * docs/dashboard-dark.png and docs/dashboard-server.png. Needs Debian's chromium (/usr/bin/chromium).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const MCPD = join(ROOT, "daemon/bin/mcpd.js");
const FIXTURE = join(ROOT, "tests/fixtures/servers/mcp-fixture.mjs");
const home = mkdtempSync(join(tmpdir(), "mcpd-shots-"));
const env = {
  ...process.env,
  MCPD_HOME: home,
  MCPD_CONFIG: join(home, "config.json"),
  XDG_RUNTIME_DIR: "",
  MCPD_HTTP_PORT: "0",
  BROWSER: "",
};
delete env.MCPD_SOCKET;
const server = (name) => ({ command: process.execPath, args: [FIXTURE, "--name", name] });
writeFileSync(
  env.MCPD_CONFIG,
  JSON.stringify({ mcpServers: { github: server("github"), memory: server("memory"), files: server("files") } }),
);

const mcpd = (...args) => execFileSync(process.execPath, [MCPD, ...args], { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const daemon = spawn(process.execPath, [MCPD, "start", "--foreground"], { env, stdio: "ignore" });
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium" });
try {
  for (let i = 0; ; i++) {
    try {
      if (JSON.parse(mcpd("status", "--json")).servers.every((s) => s.state === "ready")) break;
    } catch {}
    if (i > 200) throw new Error("the servers did not come up");
    await new Promise((r) => setTimeout(r, 100));
  }
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  await page.goto(mcpd("dashboard", "--print-url").trim());
  await page.waitForSelector('tr[data-server="files"][data-state="ready"]');
  await page.waitForFunction(() => (document.querySelector(".log")?.textContent ?? "") !== "");
  // Calls over half a minute of the stream's ticks, so the charts have something to draw.
  for (let round = 0; round < 60; round++) {
    for (let i = 0; i < (round % 4) + 1; i++) mcpd("call", round % 3 ? "github" : "memory", "echo", '{"text":"hi"}');
    // Now and then a call the server refuses (echo without its text), so the errors chart has something too.
    if (round % 5 === 2) {
      try {
        mcpd("call", "github", "echo", "{}");
      } catch {}
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: join(ROOT, `docs/dashboard-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.click('tr[data-server="github"] th button');
  const echo = page.locator('li[data-tool="echo"]');
  await echo.locator("summary").click();
  await echo.locator('input[name="text"]').fill("hello from the dashboard");
  await echo.locator('button[type="submit"]').click();
  await page.waitForFunction(() => document.querySelector('li[data-tool="echo"] .tool-result')?.textContent?.startsWith("hello"));
  await echo.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(ROOT, "docs/dashboard-server.png") });
  console.log("wrote docs/dashboard-light.png, docs/dashboard-dark.png, docs/dashboard-server.png");
} finally {
  await browser.close();
  try {
    mcpd("stop");
  } catch {
    daemon.kill("SIGKILL");
  }
  rmSync(home, { recursive: true, force: true });
}
