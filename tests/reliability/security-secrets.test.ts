/**
 * Secrets planted in a config (stdio `env` and secret-looking `args`, HTTP `headers`, URLs with
 * `user:pass@` and `?token=`) never come out of the daemon: not in its log (foreground stderr at trace
 * level, the background log file at debug level), not in `mcpd status --json` or `mcpd/status`, not in
 * `mcpd logs`, not in the errors of calls to the servers that hold them, not in the messages about
 * servers that fail to start or crash. Every secret is a unique random string, searched for as written,
 * URL-encoded and inside HTTP Basic credentials.
 */
import { createServer } from "node:net";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CliWorld, FIXTURE, until } from "../cli/cli-harness.js";
import { RawClient } from "../e2e/harness.js";

let world: CliWorld | undefined;

afterEach(async () => {
  await world?.dispose();
  world = undefined;
});

const tag = Math.random().toString(36).slice(2, 10);
/** Each secret is unique, so a hit names exactly what leaked. */
const S = {
  env: `envsecret-${tag}`,
  argEq: `argeqsecret-${tag}`,
  argNext: `argnextsecret-${tag}`,
  failEnv: `failenvsecret-${tag}`,
  failArg: `failargsecret-${tag}`,
  crashEnv: `crashenvsecret-${tag}`,
  crashArg: `crashargsecret-${tag}`,
  urlUser: `urluser${tag}`,
  urlPass: `urlpasssecret-${tag}`,
  urlToken: `urltokensecret-${tag}`,
  header: `headersecret-${tag}`,
  apiKeyHeader: `apikeyheadersecret-${tag}`,
  sseUser: `sseuser${tag}`,
  ssePass: `ssepasssecret-${tag}`,
  sseKey: `ssekeysecret-${tag}`,
  wsPass: `wspasssecret-${tag}`,
  wsToken: `wstokensecret-${tag}`,
  wsHeader: `wsheadersecret-${tag}`,
  /** Given to a server that prints it back in its usage error on stderr (as many real CLIs do). */
  echoArg: `echoargsecret-${tag}`,
};

/** Every form a secret could take in output: as written, URL-encoded, and in `Basic base64(user:pass)`. */
function leaks(text: string): string[] {
  const forms: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(S)) forms.push([name, value], [`${name} (url-encoded)`, encodeURIComponent(value)]);
  forms.push(["url credentials (basic auth)", Buffer.from(`${S.urlUser}:${S.urlPass}`).toString("base64")]);
  forms.push(["sse credentials (basic auth)", Buffer.from(`${S.sseUser}:${S.ssePass}`).toString("base64")]);
  const found = new Set<string>();
  for (const [name, form] of forms) {
    const at = text.indexOf(form);
    if (at >= 0) found.add(`${name}: ...${text.slice(Math.max(0, at - 120), at + form.length + 40)}...`);
  }
  return [...found];
}

/** A TCP port on 127.0.0.1 that nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/**
 * A real server that takes its secrets the way real ones do (`--api-key=X`, `--token X`, env), drops
 * them and runs the fixture with what is left.
 */
function writeWrapper(w: CliWorld): string {
  const file = join(w.root, "secret-wrapper.mjs");
  writeFileSync(
    file,
    `const args = process.argv.slice(2);
const keep = [];
for (let i = 0; i < args.length; i++) {
  if (/^--(api-key|password)=/.test(args[i])) continue;
  if (args[i] === "--token") { i++; continue; }
  keep.push(args[i]);
}
process.argv = [process.argv[0], ${JSON.stringify(FIXTURE)}, ...keep];
await import(${JSON.stringify(FIXTURE)});
`,
  );
  return file;
}

async function config(w: CliWorld): Promise<Record<string, unknown>> {
  const wrapper = writeWrapper(w);
  const port = await closedPort();
  return {
    // Works: secrets in env and args.
    good: {
      command: process.execPath,
      args: [wrapper, "--name", "good", `--api-key=${S.argEq}`, "--token", S.argNext],
      env: { GOOD_SECRET: S.env },
    },
    // Never starts: the command does not exist.
    nocmd: {
      command: "/nonexistent/mcpd-secret-server",
      args: ["--token", S.failArg],
      env: { FAIL_SECRET: S.failEnv },
      restart: { maxRestarts: 1, initialDelayMs: 50 },
    },
    // Starts and dies at once, again and again (crash loop).
    crashy: {
      command: process.execPath,
      args: [wrapper, "--exit-at-start", "3", `--password=${S.crashArg}`],
      env: { CRASH_SECRET: S.crashEnv },
      restart: { maxRestarts: 2, initialDelayMs: 50 },
    },
    // Refuses the flag and prints it back, secret included, on stderr: the daemon must mask it itself.
    echoer: { command: process.execPath, args: [FIXTURE, `--api-key=${S.echoArg}`], restart: { maxRestarts: 1, initialDelayMs: 50 } },
    // Refuses connections: credentials in the URL, its query and headers.
    remote: {
      type: "http",
      url: `http://${S.urlUser}:${S.urlPass}@127.0.0.1:${port}/mcp?token=${S.urlToken}&x=1`,
      headers: { Authorization: `Bearer ${S.header}`, "X-Api-Key": S.apiKeyHeader },
      restart: { maxRestarts: 1, initialDelayMs: 50 },
    },
    legacy: {
      type: "sse",
      url: `http://${S.sseUser}:${S.ssePass}@127.0.0.1:${port}/sse?api_key=${S.sseKey}`,
      restart: { maxRestarts: 1, initialDelayMs: 50 },
    },
    socket: {
      type: "ws",
      url: `ws://u:${S.wsPass}@127.0.0.1:${port}/ws?access_token=${S.wsToken}`,
      headers: { Authorization: `Bearer ${S.wsHeader}` },
      restart: { maxRestarts: 1, initialDelayMs: 50 },
    },
  };
}

/** Drives every path that reports on servers, and returns all that came back to clients. */
async function exercise(w: CliWorld): Promise<string> {
  const out: string[] = [];
  const c = await RawClient.open(join(w.mcpdHome, "mcpd.sock"));
  try {
    // A control connection, like the CLI's: it sees the full status and the logs, where secrets could hide.
    out.push(JSON.stringify(await c.request("mcpd/select", { control: true })));
    out.push(JSON.stringify(await c.initialize()));
    const failedOnes = ["nocmd", "crashy", "remote", "legacy", "socket", "echoer"];
    await until(
      async () => {
        const s = await c.request("mcpd/status");
        const states = Object.fromEntries(s.result.servers.map((x: { name: string; state: string }) => [x.name, x.state]));
        return states.good === "ready" && failedOnes.every((n) => states[n] === "failed");
      },
      "good ready and every failing server failed",
      30_000,
    );
    out.push(JSON.stringify(await c.request("tools/list")));
    out.push(JSON.stringify(await c.request("tools/call", { name: "good__echo", arguments: { text: "hello" } })));
    for (const server of ["good", ...failedOnes]) {
      out.push(JSON.stringify(await c.request("tools/call", { name: "echo", arguments: { text: "x" }, _meta: { "mcpd/server": server } })));
      out.push(JSON.stringify(await c.request("mcpd/logs", { server, lines: 1000 })));
    }
    // A restart of a failed server goes through the whole failure path again.
    out.push(JSON.stringify(await c.request("mcpd/restart", { server: "crashy" })));
    out.push(JSON.stringify(await c.request("mcpd/restart", { server: "remote" })));
    // The good server crashes mid-call: the crash and the restart are reported too.
    out.push(JSON.stringify(await c.request("tools/call", { name: "crash", arguments: {}, _meta: { "mcpd/server": "good" } })));
    await until(
      async () => (await c.request("mcpd/status")).result.servers.find((x: { name: string }) => x.name === "good").state === "ready",
      "good back",
      30_000,
    );
    out.push(JSON.stringify(await c.request("mcpd/status")));
    out.push(JSON.stringify(await c.request("mcpd/servers")));
    out.push(JSON.stringify(await c.request("mcpd/logs", { lines: 10_000 })));
    out.push(JSON.stringify(await c.request("mcpd/reload")));
  } finally {
    c.close();
  }
  for (const args of [
    ["status", "--json"],
    ["status"],
    ["logs", "-n", "10000"],
    ["logs", "crashy"],
    ["logs", "nocmd"],
    ["tools"],
    ["call", "remote", "echo", "--arg", "text=x"],
    ["call", "good", "echo", "--arg", "text=x"],
  ]) {
    const r = await w.run(args);
    out.push(`$ mcpd ${args.join(" ")}\n${r.stdout}\n${r.stderr}`);
  }
  return out.join("\n");
}

/** The reports the test is about were really produced (so an empty leak list means something). */
function expectEvidence(answers: string): void {
  expect(answers).toMatch(/"state":"failed"/);
  expect(answers).toContain("fatal: boom"); // crashy's last stderr line
  expect(answers).toMatch(/ENOENT/); // nocmd's spawn error
  expect(answers).toMatch(/ECONNREFUSED/); // remote's connection error
  expect(answers).toContain("--api-key=***"); // echoer's stderr, masked
}

describe("planted secrets never leave the daemon", () => {
  it("foreground at trace level: not on stderr, in status, logs, errors or crash reports", { timeout: 120_000 }, async () => {
    const w = (world = new CliWorld());
    w.writeConfig(await config(w));
    const daemon = w.spawn(["start", "--foreground", "--log-level", "trace"]);
    let stderr = "";
    daemon.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    daemon.stdout?.on("data", (d: Buffer) => (stderr += d.toString()));
    await until(() => w.daemonPid(), "daemon pid file", 30_000);
    const answers = await exercise(w);
    // Shutdown logs too. Wait for its last line, not for the exit: a failed `sse` server keeps the
    // process around for a while after that (a transport timer; not what this test is about).
    daemon.kill("SIGTERM");
    await until(() => stderr.includes('"msg":"mcpd stopped"'), "the daemon's last log line", 30_000);

    // The test sees what it means to see: trace-level payloads, the failures, the crash.
    expect(stderr).toMatch(/"level":10/);
    expect(stderr).toContain("hello");
    expectEvidence(answers);
    expect(stderr).toContain("--api-key=***");
    expect(leaks(stderr), "daemon stderr").toEqual([]);
    expect(leaks(answers), "answers to clients and CLI output").toEqual([]);
  });

  it("background at debug level: not in the log file (or its rotations), status or logs", { timeout: 120_000 }, async () => {
    const w = (world = new CliWorld());
    w.writeConfig(await config(w));
    const start = await w.run(["start", "--log-level", "debug"]);
    expect(start.code, start.stderr).toBe(0);
    const answers = await exercise(w);
    const logs = (): string =>
      readdirSync(w.mcpdHome)
        .filter((f) => f.startsWith("mcpd.log"))
        .map((f) => readFileSync(join(w.mcpdHome, f), "utf8"))
        .join("\n");
    process.kill(w.daemonPid() as number, "SIGTERM");
    await until(() => logs().includes('"msg":"mcpd stopped"'), "the daemon's last log line", 30_000);
    expect(logs()).toMatch(/"level":20/);
    expectEvidence(answers);
    expect(logs()).toContain("--api-key=***");
    expect(leaks(logs()), "log file").toEqual([]);
    expect(leaks(`${start.stdout}${start.stderr}${answers}`), "answers to clients and CLI output").toEqual([]);
  });
});
