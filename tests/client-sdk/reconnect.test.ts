/**
 * McpdClient across daemon restarts, against the real daemon: in-flight calls fail with
 * MCPD_CONNECTION_LOST (never replayed), the client reconnects with backoff, re-selects, re-initializes,
 * restores its subscriptions, and the next call succeeds. Also autostart through the real `mcpd start`.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connect, type McpdClient, type McpdError } from "@mcpd/client";
import { isAlive, waitFor } from "../helpers/process.js";
import { fixture, MCPD_BIN, readLog, TestDaemon } from "./test-daemon.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const text = (r: { content: Array<{ type: string; text?: string }> }): string => r.content.map((c) => c.text).join("");

async function fixturePid(c: McpdClient, server: string): Promise<number> {
  return Number(text(await c.callTool({ server, name: "pid" })));
}

describe("McpdClient reconnection with the real daemon", () => {
  it("daemon killed and started again: the in-flight call fails, the client reconnects, a subscription keeps delivering, the next call succeeds", async () => {
    let fxLog = "";
    const d = await TestDaemon.start((home) => {
      fxLog = join(home, "fx.log");
      return { fx: fixture("fx", ["--log", fxLog]) };
    });
    cleanups.push(() => d.cleanup());
    const c = await connect({ env: d.env, reconnect: { initialDelayMs: 50, maxDelayMs: 500 } });
    cleanups.push(() => c.close());
    const events: string[] = [];
    c.on("connectionLost", (e) => events.push(`lost:${e.error.code}`));
    c.on("reconnected", () => events.push("reconnected"));
    const updates: string[] = [];
    await c.subscribe("fixture://static/one", (u) => updates.push(u.uri), { server: "fx" });
    await c.callTool({ server: "fx", name: "touch", arguments: { uri: "fixture://static/one" } });
    await waitFor(() => updates.length === 1, { message: "first update" });
    const firstPid = await fixturePid(c, "fx");

    const inflight = c.callTool({ server: "fx", name: "slow", arguments: { ms: 60_000, text: "in-flight" } }).then(
      () => "resolved",
      (err: McpdError) => err.code,
    );
    await waitFor(() => readLog(fxLog).some((m) => m.params?.arguments?.text === "in-flight"), { message: "call at the server" });
    await d.stop("SIGKILL");
    expect(await inflight).toBe("MCPD_CONNECTION_LOST");
    await waitFor(() => events.length === 1, { message: "connectionLost" });
    expect(c.state).toBe("reconnecting");
    // The old server process ends with its daemon (stdin EOF), never orphaned.
    await waitFor(() => !isAlive(firstPid), { message: "the old fixture process to exit" });

    await d.startAgain();
    await waitFor(() => events.length === 2, { message: "reconnected" });
    expect(events).toEqual(["lost:MCPD_CONNECTION_LOST", "reconnected"]);
    expect(c.state).toBe("ready");
    await waitFor(async () => (await c.servers()).find((s) => s.name === "fx")?.state === "ready", {
      message: "fx ready on the new daemon",
    });
    expect(text(await c.callTool({ server: "fx", name: "echo", arguments: { text: "after" } }))).toBe("after");
    expect(await fixturePid(c, "fx")).not.toBe(firstPid);

    // The subscription is restored on the new daemon's new fixture process (re-sent at the handshake, or
    // when fx reports ready if the new daemon did not know it yet) and keeps delivering.
    await waitFor(
      async () => text(await c.callTool({ server: "fx", name: "touch", arguments: { uri: "fixture://static/one" } })) === "touched",
      {
        message: "the subscription restored upstream",
      },
    );
    await waitFor(() => updates.length === 2, { message: "update after reconnect" });
    // Never replayed: the slow call reached the server exactly once.
    expect(readLog(fxLog).filter((m) => m.params?.arguments?.text === "in-flight")).toHaveLength(1);
  });

  it("a call made while the daemon is down waits for it and succeeds once it is back", async () => {
    const d = await TestDaemon.start({ fx: fixture("fx") });
    cleanups.push(() => d.cleanup());
    const c = await connect({ env: d.env, reconnect: { initialDelayMs: 50, maxDelayMs: 500 } });
    cleanups.push(() => c.close());
    const lost = new Promise((r) => c.once("connectionLost", r));
    await d.stop("SIGKILL");
    await lost;
    const waiting = c.callTool({ server: "fx", name: "echo", arguments: { text: "waited" } }, { timeout: 30_000 });
    await d.startAgain();
    expect(text(await waiting)).toBe("waited");
  });

  it("shutdown() stops the daemon gracefully; the client reconnects when it is started again", async () => {
    const d = await TestDaemon.start({ fx: fixture("fx") });
    cleanups.push(() => d.cleanup());
    const c = await connect({ env: d.env, control: true, reconnect: { initialDelayMs: 50, maxDelayMs: 200 } });
    cleanups.push(() => c.close());
    const lost = new Promise((r) => c.once("connectionLost", r));
    await c.shutdown();
    await lost;
    await waitFor(() => d.proc?.exitCode === 0, { message: "daemon exit 0" });
    expect(existsSync(d.socketPath)).toBe(false);
    // While it is down, a call with a short timeout fails with MCPD_DAEMON_UNAVAILABLE.
    const err = (await c.ping({ timeout: 300 }).catch((e: unknown) => e)) as McpdError;
    expect(err.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    const back = new Promise((r) => c.once("reconnected", r));
    await d.startAgain();
    await back;
    expect(text(await c.callTool({ server: "fx", name: "echo", arguments: { text: "again" } }))).toBe("again");
  });

  it("autostart: true runs `mcpd start` ($MCPD_BIN), which detaches a daemon, then connects", async () => {
    const home = mkdtempSync(join(tmpdir(), "mcsdk-"));
    const configFile = join(home, "config.json");
    writeFileSync(configFile, JSON.stringify({ mcpServers: { fx: fixture("fx") } }));
    const env: NodeJS.ProcessEnv = { ...process.env, MCPD_HOME: home, MCPD_CONFIG: configFile, MCPD_BIN };
    delete env.MCPD_SOCKET;
    delete env.XDG_RUNTIME_DIR;
    const pidFile = join(home, "mcpd.pid");
    cleanups.push(async () => {
      // The daemon autostart started is ours: end it by the pid it recorded, then remove the home.
      const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8")) : undefined;
      if (pid && isAlive(pid)) {
        process.kill(pid, "SIGTERM");
        await waitFor(() => !isAlive(pid), { message: "autostarted daemon exit" });
      }
      rmSync(home, { recursive: true, force: true });
    });

    const refused = (await connect({ env }).catch((e: unknown) => e)) as McpdError;
    expect(refused.code).toBe("MCPD_DAEMON_UNAVAILABLE");
    expect(refused.message).toContain("mcpd start");

    const c = await connect({ env, autostart: true, control: true });
    cleanups.push(() => c.close());
    const status = await c.status();
    expect(status.daemon.pid).toBe(Number(readFileSync(pidFile, "utf8")));
    expect(status.daemon.pid).not.toBe(process.pid);
    expect(text(await c.callTool({ server: "fx", name: "echo", arguments: { text: "autostarted" } }))).toBe("autostarted");

    // A second autostart client finds the running daemon and starts nothing.
    const c2 = await connect({ env, autostart: true });
    cleanups.push(() => c2.close());
    expect((await c2.status()).daemon.pid).toBe(status.daemon.pid);

    const pid = status.daemon.pid;
    await c.shutdown();
    await waitFor(() => !isAlive(pid), { message: "daemon exit after shutdown()" });
  });
});
