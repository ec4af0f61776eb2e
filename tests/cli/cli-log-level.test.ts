/**
 * Log levels in a running daemon: `mcpd reload` applies a new `mcpd.logLevel` at once (debug lines, then
 * trace lines of every message in and out, then neither), and a server's own `logLevel` sets the level
 * of that server's lines alone, changed by a reload without restarting the server. Real daemons started by
 * the real CLI; what is absent is shown by a later line (a reload's) that is present.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CliWorld, until } from "./cli-harness.js";

interface LogLine {
  level: number;
  msg: string;
  server?: string;
  message?: { method?: string };
}

let world: CliWorld;
afterEach(async () => {
  await world.run(["stop"]).catch(() => {});
  await world.dispose();
});

function logLines(w: CliWorld): LogLine[] {
  return readFileSync(join(w.mcpdHome, "mcpd.log"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LogLine);
}

/** Runs `mcpd ARGS`, which must succeed. */
async function mcpd(w: CliWorld, args: string[]): Promise<string> {
  const r = await w.run(args);
  expect(r.code, `mcpd ${args.join(" ")}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

/** Reloads; resolves with the index of the reload's own line in the log, once it is there. */
async function reload(w: CliWorld): Promise<number> {
  const before = logLines(w).filter((l) => l.msg === "config reloaded").length;
  await mcpd(w, ["reload"]);
  return until(() => {
    const at = logLines(w).findLastIndex((l) => l.msg === "config reloaded");
    return logLines(w).filter((l) => l.msg === "config reloaded").length > before ? at + 1 : undefined;
  }, "the reload's line in the log");
}

async function serversReady(w: CliWorld): Promise<Array<{ name: string; pid: number | null }>> {
  return until(async () => {
    const servers = JSON.parse(await mcpd(w, ["status", "--json"])).servers as Array<{ name: string; state: string; pid: number | null }>;
    return servers.every((s) => s.state === "ready") ? servers : undefined;
  }, "servers ready");
}

describe("log levels in a running daemon", () => {
  it("mcpd reload changes the daemon's level: debug lines after a reload to debug, every message at trace, neither back at info", async () => {
    world = new CliWorld();
    const w = world;
    const config = (logLevel: string): void => w.writeConfig({ fx: w.fixture("fx") }, { mcpd: { logLevel } });
    config("info");
    await mcpd(w, ["start"]);
    await serversReady(w);
    // A connection is a debug line ("client connected"); at info there is none before the reload's line.
    await mcpd(w, ["status"]);
    const atInfo = await reload(w);
    expect(
      logLines(w)
        .slice(0, atInfo)
        .filter((l) => l.level < 30),
    ).toEqual([]);

    config("debug");
    const atDebug = await reload(w);
    await mcpd(w, ["status"]);
    await until(
      () =>
        logLines(w)
          .slice(atDebug)
          .some((l) => l.level === 20 && l.msg === "client connected"),
      "a debug line",
    );

    config("trace");
    const atTrace = await reload(w);
    expect(await mcpd(w, ["call", "fx", "echo", "--arg", 'text="traced"'])).toBe("traced\n");
    await until(
      () =>
        logLines(w)
          .slice(atTrace)
          .some((l) => l.level === 10 && l.msg === "recv" && l.message?.method === "tools/call"),
      "the call's message at trace level",
    );

    config("info");
    const backAtInfo = await reload(w);
    await mcpd(w, ["call", "fx", "echo", "--arg", 'text="quiet"']);
    const marker = await reload(w);
    expect(
      logLines(w)
        .slice(backAtInfo, marker)
        .filter((l) => l.level < 30),
    ).toEqual([]);
  });

  it("a server's own logLevel: its debug lines while the daemon and the other server stay at info; a reload changes it without restarting the server", async () => {
    world = new CliWorld();
    const w = world;
    const config = (fxLevel: string | undefined, fyLevel: string | undefined): void =>
      w.writeConfig(
        { fx: w.fixture("fx", [], fxLevel ? { logLevel: fxLevel } : {}), fy: w.fixture("fy", [], fyLevel ? { logLevel: fyLevel } : {}) },
        { mcpd: { logLevel: "info" } },
      );
    config("debug", undefined);
    await mcpd(w, ["start"]);
    const [fx] = (await serversReady(w)).filter((s) => s.name === "fx");
    // Its stderr ("fixture fx ready") is logged at debug.
    await until(() => logLines(w).some((l) => l.level === 20 && l.server === "fx" && l.msg === "server stderr"), "fx's debug lines");
    const first = await reload(w);
    expect(
      logLines(w)
        .slice(0, first)
        .filter((l) => l.level < 30 && l.server !== "fx"),
    ).toEqual([]);

    // Swapped: fx follows the daemon again, fy logs at debug. Neither is restarted by it.
    config(undefined, "debug");
    const swapped = await reload(w);
    expect((await serversReady(w)).find((s) => s.name === "fx")?.pid).toBe(fx?.pid);
    await mcpd(w, ["restart", "fx"]);
    await mcpd(w, ["restart", "fy"]);
    await serversReady(w);
    await until(
      () =>
        logLines(w)
          .slice(swapped)
          .some((l) => l.level === 20 && l.server === "fy" && l.msg === "server stderr"),
      "fy's debug lines",
    );
    const marker = await reload(w);
    expect(
      logLines(w)
        .slice(swapped, marker)
        .filter((l) => l.level < 30 && l.server === "fx"),
    ).toEqual([]);
  });
});
