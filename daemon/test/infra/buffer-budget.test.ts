/**
 * The daemon-wide buffer budget (`mcpd.maxBufferedBytesTotal`) shared by the socket server and the HTTP
 * front end: charges add up over every account, and past the budget the largest holder of any account is
 * shed, then the next, until the total is within it. The accounts here are in memory (the budget's port);
 * the HTTP front end's real account, HttpBuffers, is exercised with holders of its own kind.
 */
import { silentLogger } from "@mcpd/protocol";
import { describe, expect, it } from "vitest";
import { HttpBuffers, type HttpHolder } from "../../src/http/http-buffers.js";
import { type BudgetAccount, BufferBudget } from "../../src/infra/buffer-budget.js";

/** An account of named holders whose bytes it charges; a shed holder releases everything it holds. */
class Holders implements BudgetAccount {
  readonly held = new Map<string, number>();
  readonly shed: string[] = [];
  constructor(private readonly budget: BufferBudget) {
    budget.add(this);
  }
  hold(name: string, bytes: number): void {
    const before = this.held.get(name) ?? 0;
    this.held.set(name, bytes);
    this.budget.charge(bytes - before);
  }
  largestHolder(): number {
    return Math.max(0, ...this.held.values());
  }
  shedLargest(): void {
    const [name, bytes] = [...this.held].sort((a, b) => b[1] - a[1])[0] as [string, number];
    this.held.delete(name);
    this.shed.push(name);
    this.budget.charge(-bytes);
  }
}

describe("BufferBudget", () => {
  it("counts every account's bytes in one total and sheds nothing within the budget", () => {
    const budget = new BufferBudget(100);
    const socket = new Holders(budget);
    const http = new Holders(budget);
    socket.hold("a", 40);
    http.hold("b", 60);
    expect(budget.bytes).toBe(100);
    expect([...socket.shed, ...http.shed]).toEqual([]);
    http.hold("b", 10);
    expect(budget.bytes).toBe(50);
  });

  it("past the budget sheds the largest holder over all accounts, then the next, until within it", () => {
    const budget = new BufferBudget(100);
    const socket = new Holders(budget);
    const http = new Holders(budget);
    socket.hold("s1", 30);
    socket.hold("s2", 20);
    http.hold("h1", 45);
    http.hold("h2", 40);
    // 135 held: h1 (45) goes; 90 is within.
    expect(http.shed).toEqual(["h1"]);
    expect(socket.shed).toEqual([]);
    socket.hold("s1", 90);
    // 150 held: s1 (90) goes; 60 is within.
    expect(socket.shed).toEqual(["s1"]);
    expect(budget.bytes).toBe(60);
  });

  it("a lower budget (a reload) is enforced at once", () => {
    const budget = new BufferBudget(1_000);
    const socket = new Holders(budget);
    for (const [name, bytes] of [
      ["a", 300],
      ["b", 200],
      ["c", 100],
    ] as const)
      socket.hold(name, bytes);
    budget.setMax(250);
    expect(socket.shed).toEqual(["a", "b"]);
    expect(budget.bytes).toBe(100);
    expect(budget.max).toBe(250);
  });

  it("HttpBuffers: tracks only holders holding bytes, and sheds the one holding the most", () => {
    const budget = new BufferBudget(1_000);
    const buffers = new HttpBuffers(budget, silentLogger);
    const shed: string[] = [];
    const holder = (name: string): HttpHolder => {
      const h: HttpHolder = {
        held: 0,
        shed: () => {
          shed.push(name);
          buffers.set(h, 0);
        },
      };
      return h;
    };
    const [body, stream, replay] = [holder("body"), holder("stream"), holder("replay")];
    buffers.set(body, 400);
    buffers.set(replay, 100);
    buffers.set(stream, 450);
    expect(buffers.bytes).toBe(950);
    expect(buffers.largestHolder()).toBe(450);
    buffers.set(stream, 600);
    expect(shed).toEqual(["stream"]);
    expect(buffers.bytes).toBe(500);
    expect(budget.bytes).toBe(500);
    buffers.set(body, 0);
    expect(buffers.largestHolder()).toBe(100);
  });
});
