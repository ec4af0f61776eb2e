/**
 * Deadline: a request's deadline that progress restarts, never past a maximum total. One class for the
 * JSON-RPC peer and the client SDK's one-request exchange, which each kept their own copy.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Deadline } from "../src/deadline.js";
import { MAX_TIMER_MS } from "../src/timers.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A deadline of `ms` that records its expiries (with the argument it was given). */
function recorded(ms: number): { deadline: Deadline<string>; fired: string[] } {
  const fired: string[] = [];
  const deadline = Deadline.start<string>(ms, (arg) => fired.push(arg), "owner");
  if (deadline === undefined) throw new Error(`no deadline for ${ms} ms`);
  return { deadline, fired };
}

describe("Deadline", () => {
  it("fires once, with its argument, when its time has passed", () => {
    const { deadline, fired } = recorded(1000);
    expect(deadline.running).toBe(true);
    vi.advanceTimersByTime(999);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(["owner"]);
    expect(deadline.running).toBe(false);
    vi.advanceTimersByTime(10_000);
    expect(fired).toEqual(["owner"]);
  });

  it.each([0, -1, Number.NaN, MAX_TIMER_MS, MAX_TIMER_MS + 1, Number.POSITIVE_INFINITY])(
    "is none for %s ms: no deadline, no timer",
    (ms) => {
      expect(Deadline.start(ms, () => {}, undefined)).toBeUndefined();
      expect(vi.getTimerCount()).toBe(0);
    },
  );

  it("is one for the longest delay a timer keeps", () => {
    const deadline = Deadline.start(MAX_TIMER_MS - 1, () => {}, undefined);
    expect(deadline?.running).toBe(true);
    deadline?.stop();
  });

  it("stops: it never fires after", () => {
    const { deadline, fired } = recorded(1000);
    deadline.stop();
    expect(deadline.running).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5000);
    expect(fired).toEqual([]);
    deadline.stop();
  });

  // [progress at (ms since start), max total, expected answers of restart(), fired at]
  it.each<[string, number[], number, boolean[], number | undefined]>([
    ["progress 900 ms apart keeps restarting it", [900, 1800, 2700], 5000, [true, true, true], 3700],
    ["no progress: it fires at its length", [], 5000, [], 1000],
    ["progress at the maximum total gives up", [900, 1800, 2700, 3600, 4500, 5000], 5000, [true, true, true, true, true, false], undefined],
    [
      "progress after the maximum total gives up",
      [900, 1800, 2700, 3600, 4500, 5400],
      5000,
      [true, true, true, true, true, false],
      undefined,
    ],
    [
      "a restart may run past the maximum total until the next progress",
      [900, 1800, 2700, 3600, 4500],
      5000,
      [true, true, true, true, true],
      5500,
    ],
  ])("%s", (_title, progressAt, maxTotalMs, answers, firedAt) => {
    const { deadline, fired } = recorded(1000);
    const got: boolean[] = [];
    let now = 0;
    for (const at of progressAt) {
      vi.advanceTimersByTime(at - now);
      now = at;
      got.push(deadline.restart(maxTotalMs));
    }
    expect(got).toEqual(answers);
    if (firedAt === undefined) {
      // Given up: stopped, it never fires.
      expect(deadline.running).toBe(false);
      vi.advanceTimersByTime(10_000);
      expect(fired).toEqual([]);
      return;
    }
    vi.advanceTimersByTime(firedAt - now - 1);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(["owner"]);
  });

  it("once fired, progress has nothing to restart", () => {
    const { deadline, fired } = recorded(1000);
    vi.advanceTimersByTime(1000);
    expect(deadline.restart(5000)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    expect(fired).toEqual(["owner"]);
  });

  it("arms one timer, and the restart replaces it", () => {
    const { deadline } = recorded(1000);
    expect(vi.getTimerCount()).toBe(1);
    deadline.restart(5000);
    expect(vi.getTimerCount()).toBe(1);
    deadline.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});
