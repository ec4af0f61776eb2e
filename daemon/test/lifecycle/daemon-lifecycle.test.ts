import { describe, expect, it } from "vitest";
import type { Logger } from "@mcpd/protocol";
import { DaemonLifecycle } from "../../src/lifecycle/daemon-lifecycle.js";

/** A promise settled from outside. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A logger keeping each line's message. */
function recordingLogger(lines: string[]): Logger {
  const keep = (_fields: object, msg?: string): void => void lines.push(msg ?? "");
  return { trace: keep, debug: keep, info: keep, warn: keep, error: keep } as Logger;
}

/** A lifecycle whose reloads wait for the test and apply nothing once their signal aborted; `events` records the order of things. */
function world() {
  const events: string[] = [];
  const lines: string[] = [];
  const gates: Array<ReturnType<typeof deferred<void>>> = [];
  let n = 0;
  const lifecycle = new DaemonLifecycle<string>({
    async reload(signal) {
      const id = ++n;
      events.push(`reload ${id} begins`);
      const gate = deferred<void>();
      gates.push(gate);
      // Like the daemon's: the long wait is given up when shutdown begins, and nothing is applied then.
      await Promise.race([gate.promise, new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)))]);
      events.push(`reload ${id} applied`);
      return `r${id}`;
    },
    async teardown(reason) {
      events.push(`teardown ${reason}`);
    },
    logger: recordingLogger(lines),
  });
  return { lifecycle, events, lines, gates };
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe("DaemonLifecycle", () => {
  it("a reload asked for during one waits for it and says so in the log", async () => {
    const { lifecycle, events, lines, gates } = world();
    const first = lifecycle.reload();
    const second = lifecycle.reload();
    expect(lines).toContain("reload waits for the one in progress");
    await settle();
    expect(events).toEqual(["reload 1 begins"]);
    gates[0]?.resolve();
    expect(await first).toBe("r1");
    await settle();
    gates[1]?.resolve();
    expect(await second).toBe("r2");
    expect(events).toEqual(["reload 1 begins", "reload 1 applied", "reload 2 begins", "reload 2 applied"]);
  });

  it("shutdown abandons the running reload, fails the waiting one, tears down once after it settled, and refuses reloads from then on", async () => {
    const { lifecycle, events, lines } = world();
    const running = lifecycle.reload();
    const waiting = lifecycle.reload();
    await settle();
    const code = lifecycle.shutdown("signal");
    expect(lifecycle.shuttingDown).toBe(true);
    expect(lifecycle.shutdown("again")).toBe(code);
    const shuttingDown = { code: "MCPD_SHUTTING_DOWN", message: "mcpd is shutting down" };
    await expect(running).rejects.toMatchObject(shuttingDown);
    await expect(waiting).rejects.toMatchObject(shuttingDown);
    expect(await code).toBe(0);
    expect(await lifecycle.done).toBe(0);
    await expect(lifecycle.reload()).rejects.toMatchObject(shuttingDown);
    // The running reload applied nothing, the waiting one never began, and the teardown came after both.
    expect(events).toEqual(["reload 1 begins", "teardown signal"]);
    expect(lines).toContain("mcpd shutting down");
    expect(lines).toContain("reload abandoned: mcpd is shutting down");
  });

  it("shutdown with no reload running tears down at once", async () => {
    const { lifecycle, events } = world();
    expect(await lifecycle.shutdown()).toBe(0);
    expect(events).toEqual(["teardown shutdown"]);
  });
});
