/**
 * The daemon's private files (the HTTP token, the OAuth store, the tool cache, children.json, the pid
 * file) are written as new files renamed into place, never in place: a descriptor someone opened on the
 * old file never sees the new content, and a file another user owns is replaced by one of the user's own.
 * A state directory of the user's own that others may read or write is made 0700 (and the log says so);
 * one of another user is refused, naming it. Whatever is not a regular file at one of these paths (a
 * FIFO) is never waited on: start never hangs; the file is replaced, or refused naming it (the log).
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CliWorld, until, type CliRun } from "../cli/cli-harness.js";

const NOBODY = 65534;
const worlds: CliWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) {
    await w.run(["stop"], { timeoutMs: 30_000 }).catch(() => {});
    await w.dispose();
  }
});

function world(servers?: Record<string, unknown>): CliWorld {
  const w = new CliWorld();
  worlds.push(w);
  w.writeConfig(servers ?? { fx: w.fixture("fx") });
  return w;
}

/** `mcpd start`, bounded: a daemon that hangs before it listens makes it fail, never the test hang. */
async function start(w: CliWorld, env?: NodeJS.ProcessEnv): Promise<CliRun> {
  return w.run(["start"], { timeoutMs: 45_000, ...(env ? { env } : {}) });
}

/** The HTTP front end's URL once `mcpd status` reports it. */
async function httpUrl(w: CliWorld): Promise<string> {
  return until(
    async () => {
      const r = await w.run(["status", "--json"], { timeoutMs: 30_000 });
      return JSON.parse(r.stdout).http?.url as string | undefined;
    },
    "the HTTP front end to listen",
    30_000,
    100,
  );
}

/** The status code of an initialize POST with this bearer token. */
async function initializeStatus(url: string, token: string): Promise<number> {
  const r = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "private-files", version: "1" } },
    }),
  });
  await r.arrayBuffer();
  return r.status;
}

/** Makes `path` another user's (uid 65534); skips the test, saying why, where chown is not allowed. */
function giveAway(path: string, skip: (note: string) => void): void {
  try {
    chownSync(path, NOBODY, NOBODY);
  } catch (err) {
    skip(`needs root to make a file of another user (chown: ${(err as NodeJS.ErrnoException).code})`);
  }
}

function mkfifo(path: string): void {
  const r = spawnSync("mkfifo", ["-m", "600", path]);
  if (r.status !== 0) throw new Error(`mkfifo ${path}: ${r.stderr}`);
}

function log(w: CliWorld): string {
  try {
    return readFileSync(join(w.mcpdHome, "mcpd.log"), "utf8");
  } catch {
    return "";
  }
}

const OLD_TOKEN = "A".repeat(43);

describe("private files are replaced, never rewritten in place", () => {
  it("regression: a token file others could read (0644) is replaced by a new file: a descriptor opened on it before start never reads the new token, which the front end accepts", async () => {
    const w = world();
    mkdirSync(w.mcpdHome, { mode: 0o700 });
    const tokenFile = join(w.mcpdHome, "http-token");
    writeFileSync(tokenFile, `${OLD_TOKEN}\n`, { mode: 0o644 });
    chmodSync(tokenFile, 0o644);
    const before = statSync(tokenFile).ino;
    // Another user's read descriptor, opened while the file was readable.
    const fd = openSync(tokenFile, "r");
    try {
      const r = await start(w);
      expect(r.code, r.stderr).toBe(0);
      const url = await httpUrl(w);
      const token = readFileSync(tokenFile, "utf8").trim();
      expect(token).not.toBe(OLD_TOKEN);
      const buf = Buffer.alloc(1024);
      const seen = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString("utf8");
      expect(seen.includes(token), "the old descriptor reads the new token").toBe(false);
      expect(seen).toBe(`${OLD_TOKEN}\n`);
      const st = statSync(tokenFile);
      expect(st.ino, "the token file kept its inode").not.toBe(before);
      expect(st.mode & 0o777).toBe(0o600);
      expect(await initializeStatus(url, token)).toBe(200);
      expect(await initializeStatus(url, OLD_TOKEN)).toBe(401);
    } finally {
      closeSync(fd);
    }
  });

  it("regression: a token file owned by another user (uid 65534) is replaced by one of your own", async ({ skip }) => {
    const w = world();
    mkdirSync(w.mcpdHome, { mode: 0o700 });
    const tokenFile = join(w.mcpdHome, "http-token");
    writeFileSync(tokenFile, `${OLD_TOKEN}\n`, { mode: 0o600 });
    giveAway(tokenFile, skip);
    const r = await start(w);
    expect(r.code, r.stderr).toBe(0);
    const url = await httpUrl(w);
    const st = statSync(tokenFile);
    expect(st.uid, "the token file is still the other user's").toBe(process.getuid?.());
    const token = readFileSync(tokenFile, "utf8").trim();
    expect(token).not.toBe(OLD_TOKEN);
    expect(await initializeStatus(url, token)).toBe(200);
  });

  it("regression: a tool cache directory of another user is never written into; the log names it", async ({ skip }) => {
    const w = world();
    mkdirSync(w.mcpdHome, { mode: 0o700 });
    const cache = join(w.mcpdHome, "cache");
    mkdirSync(cache, { mode: 0o755 });
    giveAway(cache, skip);
    const r = await start(w);
    expect(r.code, r.stderr).toBe(0);
    // Before the fix the daemon wrote fx's tools there: wait for either.
    await until(() => readdirSync(cache).length > 0 || log(w).includes("tool cache write failed"), "the tool cache write");
    expect(readdirSync(cache)).toEqual([]);
    expect(log(w)).toContain(`tool cache directory ${cache} is owned by uid ${NOBODY}`);
  });
});

describe("the log file", () => {
  it("regression: an mcpd.log that is a hard link to a file of yours is refused naming it, and the file is unchanged", async () => {
    const w = world();
    mkdirSync(w.mcpdHome, { mode: 0o700 });
    const victim = join(w.root, "victim");
    writeFileSync(victim, "precious\n", { mode: 0o600 });
    const path = join(w.mcpdHome, "mcpd.log");
    linkSync(victim, path);
    const r = await start(w);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`${path} has 2 hard links (mcpd never appends to a file with another name); remove it`);
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
  });

  it("regression: an mcpd.log of another user (uid 65534) is refused naming it, and nothing is written to it", async ({ skip }) => {
    const w = world();
    mkdirSync(w.mcpdHome, { mode: 0o700 });
    const path = join(w.mcpdHome, "mcpd.log");
    writeFileSync(path, "", { mode: 0o644 });
    giveAway(path, skip);
    const r = await start(w);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`${path} is owned by uid ${NOBODY}, not ${process.getuid?.()}; remove it`);
    expect(statSync(path).size).toBe(0);
  });
});

describe("the state directory", () => {
  it("regression: your own MCPD_HOME of mode 0755 is made 0700, and the log says so", async () => {
    const w = world();
    mkdirSync(w.mcpdHome);
    chmodSync(w.mcpdHome, 0o755);
    const r = await start(w);
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(w.mcpdHome).mode & 0o777).toBe(0o700);
    expect(log(w)).toContain(`state directory ${w.mcpdHome} was mode 755 (open to other users); made it 700`);
    const shown = await w.run(["logs"]);
    expect(shown.stdout).toContain("made it 700");
  });

  it("regression: your own state directory (XDG_STATE_HOME) writable by everyone (0777) is made 0700 instead of refused; the daemon serves", async () => {
    const w = world();
    const run = join(w.root, "run");
    mkdirSync(run, { mode: 0o700 });
    const state = join(w.root, "state", "mcpd");
    mkdirSync(state, { recursive: true });
    chmodSync(state, 0o777);
    const env: NodeJS.ProcessEnv = { ...w.env, XDG_RUNTIME_DIR: run, XDG_STATE_HOME: join(w.root, "state") };
    delete env.MCPD_HOME;
    const r = await start(w, env);
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(state).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(state, "mcpd.log"), "utf8")).toContain(`state directory ${state} was mode 777`);
    const status = await w.run(["status", "--json"], { env });
    expect(status.code, status.stderr).toBe(0);
    await w.run(["stop"], { env });
  });

  it("a state directory of another user, even one only readable by others (0755), is refused naming it", async ({ skip }) => {
    const w = world();
    mkdirSync(w.mcpdHome, { mode: 0o755 });
    giveAway(w.mcpdHome, skip);
    const r = await start(w);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`${w.mcpdHome} is owned by uid ${NOBODY}`);
    expect(statSync(w.mcpdHome).mode & 0o777, "another user's directory was changed").toBe(0o755);
    expect(w.daemonPid()).toBeUndefined();
  });
});

describe("a FIFO at a private file's path never hangs the daemon", () => {
  it.each(["http-token", "mcpd.pid", "children.json"])(
    "regression: a FIFO at %s: start finishes and the FIFO is replaced by a regular 0600 file of your own",
    async (name) => {
      const w = world();
      mkdirSync(w.mcpdHome, { mode: 0o700 });
      const path = join(w.mcpdHome, name);
      mkfifo(path);
      const r = await start(w);
      expect(r.code, r.stderr).toBe(0);
      // children.json is written when the first server's process is recorded; the others at start.
      await until(() => lstatSync(path).isFile(), `${name} replaced by a regular file`);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      if (name === "http-token") await httpUrl(w);
      expect((await w.run(["status", "--json"], { timeoutMs: 30_000 })).code).toBe(0);
    },
  );

  it("regression: a FIFO at mcpd.log: start refuses naming it, at once", async () => {
    const w = world();
    mkdirSync(w.mcpdHome, { mode: 0o700 });
    const path = join(w.mcpdHome, "mcpd.log");
    mkfifo(path);
    const r = await start(w);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`${path} is a FIFO (named pipe), not a regular file; remove it`);
    expect(lstatSync(path).isFIFO()).toBe(true);
  });

  it("regression: a FIFO in place of a server's tool cache file: start finishes, the log names it, the next write replaces it", async () => {
    const w = world();
    expect((await start(w)).code).toBe(0);
    const cache = join(w.mcpdHome, "cache");
    const file = await until(() => readdirSync(cache).find((f) => f.endsWith(".tools.json")), "fx's tool cache file");
    expect((await w.run(["stop"])).code).toBe(0);
    const path = join(cache, file);
    const logBefore = log(w).length;
    rmSync(path);
    mkfifo(path);
    const r = await start(w);
    expect(r.code, r.stderr).toBe(0);
    await until(() => lstatSync(path).isFile(), "the tool cache file replaced");
    expect(log(w).slice(logBefore)).toContain(`ignoring the tool cache: ${path} is a FIFO (named pipe), not a regular file`);
  });

  it("regression: a FIFO in place of a server's OAuth tokens file: the daemon keeps answering, the log names it", async () => {
    // Nothing listens on port 9 (discard): the transport asks the store for its tokens, then fails to connect.
    const w = world({ remote: { type: "http", url: "http://127.0.0.1:9/mcp" } });
    mkdirSync(w.mcpdHome, { mode: 0o700 });
    const auth = join(w.mcpdHome, "auth");
    mkdirSync(auth, { mode: 0o700 });
    const path = join(auth, "remote.tokens.json");
    mkfifo(path);
    const r = await start(w);
    expect(r.code, r.stderr).toBe(0);
    await until(() => log(w).includes(`ignoring the tokens file: ${path} is a FIFO (named pipe), not a regular file`), "the warning");
    const status = await w.run(["status", "--json"], { timeoutMs: 30_000 });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).servers[0].name).toBe("remote");
  });
});
