import { afterEach, describe, expect, it, vi } from "vitest";
import { CallQueue } from "../../src/supervision/call-queue.js";

/** Lets every pending promise job run (p-queue starts the next task in a microtask after one ends). */
async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** A task the test ends by hand: `started` tells whether the queue ran it. */
class Task {
  started = false;
  private end: () => void = () => {};
  private readonly done = new Promise<void>((resolve) => (this.end = resolve));
  readonly run = (): Promise<void> => {
    this.started = true;
    return this.done;
  };
  finish(): void {
    this.end();
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe("a server's call queue (p-queue past the limit)", () => {
  it("hands out free slots synchronously, and only while nobody waits", async () => {
    const q = new CallQueue(2);
    expect(q.tryAcquire()).toBe(true);
    expect(q.tryAcquire()).toBe(true);
    expect(q.tryAcquire()).toBe(false);
    expect(q.running).toBe(2);
    const waiter = new Task();
    const waited = q.enqueue(waiter.run);
    expect(q.waiting).toBe(1);
    q.release();
    await flush();
    // The freed slot went to the waiter, not to whoever asks next.
    expect(waiter.started).toBe(true);
    expect(q.running).toBe(2);
    expect(q.waiting).toBe(0);
    expect(q.tryAcquire()).toBe(false);
    waiter.finish();
    await waited;
  });

  it("lets waiting tasks in in arrival order, one per freed slot", async () => {
    const q = new CallQueue(1);
    expect(q.tryAcquire()).toBe(true);
    const tasks = [new Task(), new Task(), new Task()];
    const runs = tasks.map((t) => q.run(t.run));
    expect(q.waiting).toBe(3);
    q.release();
    await flush();
    expect(tasks.map((t) => t.started)).toEqual([true, false, false]);
    tasks[0]?.finish();
    await flush();
    expect(tasks.map((t) => t.started)).toEqual([true, true, false]);
    tasks[1]?.finish();
    tasks[2]?.finish();
    await Promise.all(runs);
    expect(tasks.every((t) => t.started)).toBe(true);
    expect(q.running).toBe(0);
  });

  it("runs a waiting task of a higher priority (a list re-read) before the calls that waited longer", async () => {
    const q = new CallQueue(1);
    const running = new Task();
    const first = q.run(running.run);
    const ran: string[] = [];
    /** A task that notes its name when it starts. */
    const noted = (name: string): Task => {
      const t = new Task();
      const run = t.run;
      (t as { run: () => Promise<void> }).run = () => {
        ran.push(name);
        return run();
      };
      return t;
    };
    const calls = [noted("call 1"), noted("call 2")];
    const reread = noted("re-read");
    const runs = [q.run(calls[0]?.run as () => Promise<void>), q.run(calls[1]?.run as () => Promise<void>), q.run(reread.run, 1)];
    running.finish();
    await flush();
    expect(ran).toEqual(["re-read"]);
    reread.finish();
    await flush();
    calls[0]?.finish();
    await flush();
    calls[1]?.finish();
    await Promise.all([first, ...runs]);
    expect(ran).toEqual(["re-read", "call 1", "call 2"]);
  });

  it("a waiting task whose signal aborts leaves at once with the reason and never runs; the next one gets the slot", async () => {
    const q = new CallQueue(1);
    q.tryAcquire();
    const ac = new AbortController();
    const cancelled = new Task();
    const next = new Task();
    const first = q.run(cancelled.run, 0, ac.signal);
    const second = q.run(next.run);
    const reason = new Error("client cancelled");
    ac.abort(reason);
    await expect(first).rejects.toBe(reason);
    expect(q.waiting).toBe(1);
    q.release();
    await flush();
    expect(cancelled.started).toBe(false);
    expect(next.started).toBe(true);
    next.finish();
    await second;
    expect(q.running).toBe(0);
  });

  it("refuses at once with the reason when the signal has already aborted", async () => {
    const q = new CallQueue(1);
    q.tryAcquire();
    const reason = new Error("gone already");
    const task = new Task();
    await expect(q.run(task.run, 0, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(task.started).toBe(false);
    expect(q.running).toBe(1);
    expect(q.waiting).toBe(0);
  });

  it("raising the concurrency lets waiting tasks in at once; lowering it takes effect as slots are given back", async () => {
    const q = new CallQueue(1);
    q.tryAcquire();
    const a = new Task();
    const b = new Task();
    const runs = [q.run(a.run), q.run(b.run)];
    q.concurrency = 3;
    await flush();
    expect([a.started, b.started]).toEqual([true, true]);
    expect(q.running).toBe(3);
    q.concurrency = 1;
    a.finish();
    b.finish();
    await Promise.all(runs);
    expect(q.running).toBe(1);
    expect(q.tryAcquire()).toBe(false);
    q.release();
    expect(q.tryAcquire()).toBe(true);
  });

  it("held, it starts nothing, in the queue or past it; what waits keeps its place and runs once it is let go", async () => {
    const q = new CallQueue(2);
    const waiting = new Task();
    q.hold();
    expect(q.tryAcquire(), "no slot past the queue while it is held").toBe(false);
    const run = q.run(waiting.run);
    await flush();
    expect(waiting.started).toBe(false);
    expect(q.waiting).toBe(1);
    q.unhold();
    await flush();
    expect(waiting.started).toBe(true);
    waiting.finish();
    await run;
  });

  it("stays bounded while waiting tasks keep giving up on a queue whose slots stay taken", async () => {
    const q = new CallQueue(1);
    q.tryAcquire();
    const kept = new Task();
    const keptRun = q.run(kept.run);
    let gaveUp = 0;
    for (let i = 0; i < 10_000; i++) {
      const ac = new AbortController();
      const p = q
        .run(() => Promise.resolve(), 0, ac.signal)
        .then(
          () => {},
          () => gaveUp++,
        );
      ac.abort();
      await p;
    }
    expect(gaveUp).toBe(10_000);
    expect(q.waiting).toBe(1);
    q.release();
    await flush();
    expect(kept.started).toBe(true);
    kept.finish();
    await keptRun;
  });
});

describe("draining a server's calls", () => {
  it("settled() is woken by the last running task's end, inside and outside p-queue, with no timer but its bound (no polling)", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate", "clearImmediate", "Date"] });
    const q = new CallQueue(2);
    const outside = new Task();
    const other = new Task();
    const runs = [q.run(outside.run), q.run(other.run)];
    const inQueue = new Task();
    runs.push(q.run(inQueue.run));
    other.finish();
    await flush();
    // One task runs in a slot taken past p-queue, one in a slot p-queue gave.
    expect([outside.started, inQueue.started]).toEqual([true, true]);
    const late = new Task();
    q.hold();
    const lateRun = q.run(late.run);
    const t0 = Date.now();
    let drained: boolean | undefined;
    void q.settled(5_000).then((v) => (drained = v));
    expect(vi.getTimerCount(), "only the bound").toBe(1);
    inQueue.finish();
    await flush();
    expect(drained).toBeUndefined();
    outside.finish();
    await flush();
    expect(drained).toBe(true);
    expect(Date.now(), "no time had to pass").toBe(t0);
    expect(vi.getTimerCount(), "the bound is cleared").toBe(0);
    expect(late.started, "held: the waiting task was not started meanwhile").toBe(false);
    q.unhold();
    await flush();
    late.finish();
    await Promise.all([...runs, lateRun]);
  });

  it("settled() gives up after its bound when a task does not end, and at once when nothing runs", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
    const q = new CallQueue(1);
    await expect(q.settled(5_000)).resolves.toBe(true);
    const stuck = new Task();
    const run = q.run(stuck.run);
    let drained: boolean | undefined;
    void q.settled(5_000).then((v) => (drained = v));
    await vi.advanceTimersByTimeAsync(4_999);
    expect(drained).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(drained).toBe(false);
    stuck.finish();
    await run;
  });
});
