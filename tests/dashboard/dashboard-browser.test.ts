/**
 * The dashboard in a real browser (issue 36): Debian's chromium driven by playwright-core. Logs in through
 * `mcpd dashboard --print-url`, watches servers crash and restart, runs actions and "try a tool", filters
 * the log, and checks that server-supplied text stays text and that a page on another origin can neither
 * read nor act. Skipped, saying so, where no chromium is installed (`apt-get install chromium`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { createServer, type Server } from "node:http";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fixture, startTestDaemon, type TestDaemon } from "../e2e/harness.js";
import { HAS_CHROMIUM, NO_CHROMIUM, launchChromium } from "../helpers/chromium.js";
import { fixturePath } from "../helpers/process.js";
import { httpFront } from "../http/http-harness.js";
import { loginLink } from "./dashboard-harness.js";

const XSS = '<img src=x onerror="window.__xss=1">';

let browser: Browser | undefined;
let d: TestDaemon | undefined;
let other: Server | undefined;
let oauth: ChildProcess | undefined;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await new Promise<void>((r) => (other ? other.close(() => r()) : r()));
  other = undefined;
  if (oauth && oauth.exitCode === null && oauth.signalCode === null) {
    const gone = new Promise((r) => oauth?.once("exit", r));
    oauth.kill("SIGKILL");
    await gone;
  }
  oauth = undefined;
  await d?.stop();
  d = undefined;
});

/** A daemon with two fixture servers, one with a tool whose description holds markup, and a page logged in. */
async function loggedIn(): Promise<{ page: Page; origin: string; link: string }> {
  d = await startTestDaemon({ fx: fixture("fx"), fy: fixture("fy", ["--tool", "marked", "--tool-description", XSS]) });
  const front = await httpFront(d);
  const link = await loginLink(d);
  const page = await (browser as Browser).newPage();
  const res = await page.goto(link);
  expect(res?.status()).toBe(200);
  expect(new URL(page.url()).pathname).toBe("/");
  return { page, origin: front.origin, link };
}

async function serverStatus(server: string): Promise<any> {
  const c = await (d as TestDaemon).control();
  try {
    return (await c.request("mcpd/status")).result.servers.find((s: any) => s.name === server);
  } finally {
    c.close();
  }
}

describe.skipIf(!HAS_CHROMIUM)(`the dashboard in chromium (${NO_CHROMIUM})`, () => {
  it("logs in once through `mcpd dashboard --print-url`, shows every server with its state, a SIGKILLed server's crash then its restart, and restarts one by its button", async () => {
    const { page, link } = await loggedIn();
    await page.waitForSelector('tr[data-server="fx"][data-state="ready"]');
    await page.waitForSelector('tr[data-server="fy"][data-state="ready"]');
    // The link was used: in a fresh browser context it opens nothing.
    const fresh = await (browser as Browser).newContext();
    expect((await (await fresh.newPage()).goto(link))?.status()).toBe(401);
    await fresh.close();

    await page.evaluate(() => {
      const w = window as unknown as { seen: string[] };
      w.seen = [];
      const row = document.querySelector('tr[data-server="fx"]') as HTMLElement;
      new MutationObserver(() => w.seen.push(row.dataset.state ?? "")).observe(row, { attributes: true, attributeFilter: ["data-state"] });
    });
    const before = await serverStatus("fx");
    process.kill(before.pid, "SIGKILL");
    await page.waitForFunction(() => {
      const seen = (window as unknown as { seen: string[] }).seen;
      const crashed = seen.findIndex((s) => s !== "ready");
      return crashed >= 0 && seen.slice(crashed).includes("ready");
    });
    await page.waitForFunction(
      (n) => document.querySelector('tr[data-server="fx"] [data-field="restarts"]')?.textContent === String(n),
      before.restarts + 1,
    );
    expect(await page.textContent('tr[data-server="fx"] [data-field="last"]')).not.toBe("");

    const pid = (await serverStatus("fx")).pid;
    await page.click('tr[data-server="fx"] button[data-action="restart"]');
    await page.waitForFunction(() => /^restart fx: .*"restarted":\["fx"\]/.test(document.querySelector(".result")?.textContent ?? ""));
    await page.waitForSelector('tr[data-server="fx"][data-state="ready"]');
    expect((await serverStatus("fx")).pid).not.toBe(pid);
    expect(await page.textContent(`tr[data-server="fx"] [data-field="pid"]`)).toBe(String((await serverStatus("fx")).pid));
  });

  it("the charts count the calls and errors made while the page is open, and draw p50/p95/p99 from the latency buckets", async () => {
    d = await startTestDaemon({ fx: fixture("fx") });
    const agent = await d.raw();
    try {
      await agent.initialize();
      const page = await (browser as Browser).newPage();
      await page.goto(await loginLink(d));
      // The first figures the page gets are its baseline: every call after them is counted.
      await page.waitForSelector('tr[data-server="fx"] [data-field="calls"][data-calls="0"]');
      const before = (await serverStatus("fx")).requests;
      for (let i = 0; i < 12; i++) {
        const r = await agent.request("tools/call", { name: "fx__echo", arguments: { text: `c${i}` } });
        expect(r.result?.content?.[0]?.text).toMatch(/^c\d+/);
      }
      // echo without its `text` argument: the server answers -32602, an error.
      for (let i = 0; i < 3; i++) expect((await agent.request("tools/call", { name: "fx__echo", arguments: {} })).error?.code).toBe(-32602);
      expect((await serverStatus("fx")).requests - before).toBe(15);
      await page.waitForFunction(() => {
        const row = 'tr[data-server="fx"]';
        const calls = document.querySelector(`${row} [data-field="calls"]`) as HTMLElement | null;
        const errors = document.querySelector(`${row} [data-field="errors"]`) as HTMLElement | null;
        return calls?.dataset.calls === "15" && errors?.dataset.errors === "3";
      });
      const figures = ((await page.textContent('tr[data-server="fx"] [data-field="latency"] .figures')) ?? "").trim();
      const [p50, p95, p99] = /^(\S+) \/ (\S+) \/ (\S+) ms$/.exec(figures)?.slice(1).map(Number) ?? [];
      expect(p50).toBeGreaterThan(0);
      expect(p95).toBeGreaterThanOrEqual(p50 as number);
      expect(p99).toBeGreaterThanOrEqual(p95 as number);
      expect(await page.locator('tr[data-server="fx"] [data-field="latency"] svg polyline').count()).toBeGreaterThanOrEqual(3);
      await page.close();
    } finally {
      agent.close();
    }
  });

  it("try a tool calls echo through mcpd and shows the answer; a tool description and a stderr line holding markup render as text; the log filters by level and server", async () => {
    const { page } = await loggedIn();
    await page.waitForSelector('tr[data-server="fy"][data-state="ready"]');
    await page.click('tr[data-server="fy"] th button');
    const marked = page.locator('li[data-tool="marked"] .description');
    await marked.waitFor();
    expect(await marked.textContent()).toBe(XSS);

    await page.click('tr[data-server="fx"] th button');
    const echo = page.locator('li[data-tool="echo"]');
    await echo.locator("summary").click();
    await echo.locator('input[name="text"]').fill("hello from the browser");
    await echo.locator('button[type="submit"]').click();
    await page.waitForFunction(() =>
      document.querySelector('li[data-tool="echo"] .tool-result')?.textContent?.startsWith("hello from the browser\n"),
    );

    const stderr = page.locator('li[data-tool="stderr"]');
    await stderr.locator("summary").click();
    await stderr.locator('input[name="text"]').fill(XSS);
    await stderr.locator('button[type="submit"]').click();
    await page.waitForFunction(() => document.querySelector('li[data-tool="stderr"] .tool-result')?.textContent?.startsWith("written"));
    await page.click('tr[data-server="fx"] th button');
    await page.waitForFunction((x) => document.querySelector(".stderr")?.textContent?.includes(x), XSS);
    expect(await page.evaluate(() => ({ xss: (window as unknown as { __xss?: number }).__xss, imgs: document.images.length }))).toEqual({
      xss: undefined,
      imgs: 0,
    });

    await page.waitForFunction(() => (document.querySelector(".log")?.textContent ?? "").includes(" INFO "));
    await page.selectOption("#log-level", "warn");
    expect(await page.textContent(".log")).not.toContain(" INFO ");
    await page.selectOption("#log-level", "trace");
    await page.fill("#log-server", "fy");
    const lines = ((await page.textContent(".log")) ?? "").split("\n").filter((l) => l !== "");
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l).toContain('"server":"fy"');
  });

  it("a page on another origin (another 127.0.0.1 port) can neither read nor act, and the bearer token does not open the dashboard", async () => {
    const { page, origin } = await loggedIn();
    other = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(
        `<form id="f" method="POST" action="${origin}/dashboard/api/action" enctype="text/plain">` +
          `<input name='{"action":"restart","server":"fx","x":"' value='"}'><button>go</button></form>`,
      );
    });
    await new Promise<void>((r) => (other as Server).listen(0, "127.0.0.1", () => r()));
    const port = (other.address() as { port: number }).port;
    await page.waitForSelector('tr[data-server="fx"][data-state="ready"]');
    const restarts = (await serverStatus("fx")).restarts;

    await page.goto(`http://127.0.0.1:${port}/`);
    const read = await page.evaluate(async (o) => {
      try {
        const r = await fetch(`${o}/dashboard/api/server?name=fx`, { credentials: "include" });
        return `read ${r.status}`;
      } catch (err) {
        return `failed: ${(err as Error).name}`;
      }
    }, origin);
    expect(read).toBe("failed: TypeError");
    const acted = await page.evaluate(async (o) => {
      await fetch(`${o}/dashboard/api/action`, {
        method: "POST",
        mode: "no-cors",
        credentials: "include",
        headers: { "content-type": "text/plain" },
        body: JSON.stringify({ action: "restart", server: "fx" }),
      }).catch(() => undefined);
      return "sent";
    }, origin);
    expect(acted).toBe("sent");
    const [forged] = await Promise.all([page.waitForNavigation(), page.click("#f button")]);
    expect(forged?.status()).toBe(403);
    expect((await serverStatus("fx")).restarts).toBe(restarts);

    const withToken = await (browser as Browser).newContext({
      extraHTTPHeaders: { authorization: `Bearer ${(await httpFront(d as TestDaemon)).token}` },
    });
    expect((await (await withToken.newPage()).goto(`${origin}/`))?.status()).toBe(401);
    await withToken.close();
    await page.close();
  });

  it("a needs-auth server's Authorize button runs mcpd auth's flow: its page approves, and the server comes up", async () => {
    oauth = spawn(process.execPath, [fixturePath("oauth-mcp.mjs")], { stdio: ["ignore", "pipe", "inherit"] });
    const child = oauth;
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", resolve);
      child.once("exit", (code) => reject(new Error(`oauth fixture exited with ${code}`)));
    });
    d = await startTestDaemon({ oauthy: { type: "http", url: (JSON.parse(line) as { url: string }).url } });
    const page = await (browser as Browser).newPage();
    await page.goto(await loginLink(d));
    await page.click('tr[data-server="oauthy"][data-state="needs-auth"] button[data-action="authorize"]');
    const href = await page.getAttribute(".result a.authorize-link", "href");
    expect(href).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    // The fixture's authorization server approves at once and sends the browser back to mcpd.
    const approval = await (browser as Browser).newPage();
    await approval.goto(href as string);
    await page.waitForSelector('tr[data-server="oauthy"][data-state="ready"]');
  });
});
