/**
 * Text that comes from elsewhere never reaches the terminal with its control characters: an authorization
 * server's error_description, a server's tool names, descriptions and results, its stderr lines (in
 * `mcpd status` and `mcpd logs SERVER`) and the daemon's log that quotes them (`mcpd logs`). They are shown
 * as `\u001b`-style escapes instead; newlines and tabs stay; `--json` output parses to exactly what the
 * server sent. Real daemon, real `mcpd` command, servers written for the test.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { writeScriptedServer } from "../helpers/scripted-server.js";
import { CliWorld, ROOT, until, type CliRun } from "./cli-harness.js";

/** Every character that must never be written raw: C0 but tab and newline, DEL, C1, bidi overrides and isolates. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these control characters are what the test looks for.
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** A window-title change (OSC 0 ... BEL), a screen clear (CSI 2J), a one-character C1 CSI, and a right-to-left override. */
const EVIL = "\u001b]0;pwned\u0007 clear\u001b[2J c1\u009b31m rtl\u202eevil";
/** What it looks like once made visible. */
const SHOWN = "\\u001b]0;pwned\\u0007 clear\\u001b[2J c1\\u009b31m rtl\\u202eevil";

function expectClean(r: CliRun, what: string): void {
  for (const [stream, text] of [
    ["stdout", r.stdout],
    ["stderr", r.stderr],
  ] as const) {
    const m = RAW_CONTROL.exec(text);
    // Soft: a failure lists every command that leaked, not only the first.
    expect
      .soft(m, `${what}: raw U+${m?.[0].charCodeAt(0).toString(16).padStart(4, "0")} on ${stream}: ${JSON.stringify(text.slice(0, 400))}`)
      .toBeNull();
  }
}

let world: CliWorld | undefined;
let oauth: ChildProcess | undefined;
afterEach(async () => {
  await world?.run(["stop"], { timeoutMs: 30_000 }).catch(() => {});
  if (oauth && oauth.exitCode === null) {
    const gone = new Promise((resolve) => oauth?.once("exit", resolve));
    oauth.kill("SIGKILL");
    await gone;
  }
  oauth = undefined;
  await world?.dispose();
  world = undefined;
});

describe("remote text on the terminal", () => {
  it("regression: mcpd auth prints an authorization server's error_description with its escape sequences made visible", async () => {
    const w = new CliWorld();
    world = w;
    oauth = spawn(process.execPath, [join(ROOT, "tests/fixtures/servers/oauth-mcp.mjs")], { stdio: ["ignore", "pipe", "inherit"] });
    const first = await new Promise<string>((resolve, reject) => {
      createInterface({ input: oauth?.stdout as NodeJS.ReadableStream }).once("line", resolve);
      oauth?.once("exit", (code) => reject(new Error(`oauth fixture exited with ${code}`)));
    });
    const { issuer, url } = JSON.parse(first) as { issuer: string; url: string };
    await fetch(`${issuer}/admin/deny`, { method: "POST", body: JSON.stringify({ error: "access_denied", error_description: EVIL }) });
    w.env.BROWSER = `${process.execPath} ${join(ROOT, "tests/fixtures/browser/follow-redirects.mjs")}`;
    w.writeConfig({ oauthy: { type: "http", url } });
    expect((await w.run(["start"])).code).toBe(0);
    const r = await w.run(["auth", "oauthy"]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`the authorization was not granted: access_denied (${SHOWN})`);
    expectClean(r, "mcpd auth");
  });

  it("regression: mcpd tools, call, status, logs SERVER and logs show a server's escape sequences made visible; --json keeps them exactly", async () => {
    const w = new CliWorld();
    world = w;
    w.env.MCPD_LOG_LEVEL = "trace";
    const tool = { name: "evil", description: `Reads files ${EVIL}\nsecond line`, inputSchema: { type: "object" } };
    const server = writeScriptedServer(
      w.root,
      "evil",
      `if (m.method === "tools/list") return JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { tools: [${JSON.stringify(tool)}] } });
       if (m.method === "tools/call") {
         process.stderr.write(${JSON.stringify(`stderr ${EVIL}\n`)});
         return JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: ${JSON.stringify(`result ${EVIL}\r\nnext\tline`)} }] } });
       }`,
    );
    // A server that says why it fails, with escapes, then exits: its stderr line is in mcpd status.
    const crashing = join(w.root, "crashing.mjs");
    writeFileSync(crashing, `process.stderr.write(${JSON.stringify(`fatal ${EVIL}\n`)}); process.exit(1);\n`);
    w.writeConfig({ evil: { command: process.execPath, args: [server] }, crashing: { command: process.execPath, args: [crashing] } });
    expect((await w.run(["start"])).code).toBe(0);

    const tools = await until(async () => {
      const r = await w.run(["tools", "evil"]);
      return r.stdout.includes("evil__evil") ? r : undefined;
    }, "evil's tools");
    expect.soft(tools.stdout).toContain(`Reads files ${SHOWN}`);
    expectClean(tools, "mcpd tools");
    const toolsJson = await w.run(["tools", "evil", "--json"]);
    expectClean(toolsJson, "mcpd tools --json");
    expect.soft(JSON.parse(toolsJson.stdout)[0].description).toBe(tool.description);

    const call = await w.run(["call", "evil", "evil"]);
    expect(call.code, call.stderr).toBe(0);
    expect.soft(call.stdout).toBe(`result ${SHOWN}\nnext\tline\n`);
    expectClean(call, "mcpd call");
    const callJson = await w.run(["call", "evil", "evil", "--json"]);
    expectClean(callJson, "mcpd call --json");
    expect.soft(JSON.parse(callJson.stdout).content[0].text).toBe(`result ${EVIL}\r\nnext\tline`);

    const logs = await until(async () => {
      const r = await w.run(["logs", "evil"]);
      return r.stdout.includes("stderr ") ? r : undefined;
    }, "evil's stderr line");
    expect.soft(logs.stdout).toContain(`stderr ${SHOWN}`);
    expectClean(logs, "mcpd logs evil");

    const status = await until(async () => {
      const r = await w.run(["status"]);
      return r.stdout.includes("crashing: stderr: fatal") ? r : undefined;
    }, "crashing's stderr in mcpd status");
    expectClean(status, "mcpd status");
    expect.soft(status.stdout).toContain("crashing: stderr: fatal \\u001b]0;pwned");
    const statusJson = await w.run(["status", "--json"]);
    expectClean(statusJson, "mcpd status --json");
    expect
      .soft(JSON.parse(statusJson.stdout).servers.find((s: { name: string }) => s.name === "crashing").lastStderr)
      .toBe(`fatal ${EVIL}`);

    // The daemon's log at trace level quotes the tools/list answer and the stderr lines.
    const daemonLog = await w.run(["logs", "-n", "1000"]);
    expect.soft(daemonLog.stdout).toContain("\\u001b]0;pwned");
    expectClean(daemonLog, "mcpd logs");
  });
});
