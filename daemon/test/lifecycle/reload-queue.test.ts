import { describe, expect, it } from "vitest";
import { abandonOnAbort, ReloadQueue } from "../../src/lifecycle/reload-queue.js";

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

/** A run whose every call waits for the test to finish it; records what it read when it began. */
function scripted(source: { value: string }) {
  const calls: Array<{ read: string; signal: AbortSignal; finish: ReturnType<typeof deferred<string>> }> = [];
  let active = 0;
  let most = 0;
  const run = async (signal: AbortSignal): Promise<string> => {
    const call = { read: source.value, signal, finish: deferred<string>() };
    calls.push(call);
    most = Math.max(most, ++active);
    try {
      return await call.finish.promise;
    } finally {
      active--;
    }
  };
  return { run, calls, most: () => most };
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe("ReloadQueue", () => {
  it("runs one reload at a time: callers asking while one runs share the one next reload, which reads the source when it begins", async () => {
    const source = { value: "v1" };
    const s = scripted(source);
    const q = new ReloadQueue(s.run);
    const first = q.request();
    expect(q.running).toBe(true);
    source.value = "v2";
    const second = q.request();
    const third = q.request();
    expect(q.waiting).toBe(2);
    source.value = "v3";
    await settle();
    expect(s.calls.map((c) => c.read)).toEqual(["v1"]);

    s.calls[0]?.finish.resolve("one");
    expect(await first).toBe("one");
    await settle();
    // The next reload began once the first settled, with what the source held then.
    expect(s.calls.map((c) => c.read)).toEqual(["v1", "v3"]);
    expect(q.waiting).toBe(0);
    s.calls[1]?.finish.resolve("two");
    expect(await Promise.all([second, third])).toEqual(["two", "two"]);
    expect(s.most()).toBe(1);
    expect(q.running).toBe(false);

    // Idle again: the next request begins at once.
    const fourth = q.request();
    expect(s.calls).toHaveLength(3);
    s.calls[2]?.finish.resolve("three");
    expect(await fourth).toBe("three");
  });

  it("a failed reload fails its own callers only; the next one still runs", async () => {
    const s = scripted({ value: "v" });
    const q = new ReloadQueue(s.run);
    const first = q.request();
    const second = q.request();
    s.calls[0]?.finish.reject(new Error("bad config"));
    await expect(first).rejects.toThrow("bad config");
    await settle();
    s.calls[1]?.finish.resolve("fixed");
    expect(await second).toBe("fixed");
  });

  it("a run that throws before its first await rejects its callers and leaves the queue usable", async () => {
    let n = 0;
    const q = new ReloadQueue<string>((): Promise<string> => {
      if (n++ === 0) throw new Error("thrown at once");
      return Promise.resolve("ok");
    });
    await expect(q.request()).rejects.toThrow("thrown at once");
    expect(q.running).toBe(false);
    expect(await q.request()).toBe("ok");
  });

  it("close: waiting callers fail with the reason, later requests too, the running reload's signal aborts, and close resolves once it settled", async () => {
    const s = scripted({ value: "v" });
    const q = new ReloadQueue(s.run);
    const running = q.request();
    const waiting = q.request();
    const reason = new Error("shutting down");
    let closed = false;
    const closing = q.close(reason).then(() => (closed = true));
    await expect(waiting).rejects.toBe(reason);
    await expect(q.request()).rejects.toBe(reason);
    expect(s.calls[0]?.signal.aborted).toBe(true);
    expect(s.calls[0]?.signal.reason).toBe(reason);
    await settle();
    expect(closed).toBe(false);
    s.calls[0]?.finish.reject(reason);
    await closing;
    await expect(running).rejects.toBe(reason);
    // Nothing waiting began after the close.
    expect(s.calls).toHaveLength(1);
    expect(q.closed).toBe(true);
  });

  it("close with nothing running resolves at once", async () => {
    const q = new ReloadQueue(async () => "x");
    await q.close(new Error("bye"));
    await expect(q.request()).rejects.toThrow("bye");
  });
});

describe("abandonOnAbort", () => {
  it("settles as the work does while the signal stays quiet", async () => {
    const c = new AbortController();
    expect(await abandonOnAbort(Promise.resolve(1), c.signal)).toBe(1);
    await expect(abandonOnAbort(Promise.reject(new Error("no")), c.signal)).rejects.toThrow("no");
  });

  it("rejects with the reason as soon as the signal aborts, and at once when it already has; the work's own end is ignored", async () => {
    const c = new AbortController();
    const work = deferred<number>();
    const p = abandonOnAbort(work.promise, c.signal);
    const reason = new Error("shutdown");
    c.abort(reason);
    await expect(p).rejects.toBe(reason);
    work.reject(new Error("later"));
    const lateWork = deferred<number>();
    await expect(abandonOnAbort(lateWork.promise, c.signal)).rejects.toBe(reason);
    lateWork.reject(new Error("unobserved"));
    await settle();
  });
});
