/**
 * The runnable examples of docs/client-sdk.md (examples/*.mjs), run as real processes against the real
 * daemon: what the documentation shows must work as shown.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVERYTHING, fixture, ROOT, TestDaemon } from "./test-daemon.js";

let d: TestDaemon;

beforeAll(async () => {
  d = await TestDaemon.start({ fx: fixture("fx"), everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } });
});
afterAll(async () => {
  await d?.cleanup();
});

function run(script: string, args: string[], env: NodeJS.ProcessEnv = d.env): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, "examples", script), ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (out += b.toString()));
    child.on("exit", (code) => resolve({ code, out }));
  });
}

describe("examples/", () => {
  it("agent.mjs lists every tool and calls one with progress", async () => {
    const { code, out } = await run("agent.mjs", ["fx", "progress", '{"steps":3,"intervalMs":10}']);
    expect(out).toContain("fx/echo");
    expect(out).toContain("progress 1/3");
    expect(out).toContain("progress 3/3");
    expect(out.trim().endsWith("done")).toBe(true);
    expect(code).toBe(0);
  });

  it("sdk-transport.mjs drives the official SDK Client over McpdTransport and cancels a slow call", async () => {
    const { code, out } = await run("sdk-transport.mjs", ["fx"]);
    expect(out).toContain("connected to fx");
    expect(out).toContain("echo");
    expect(out).toContain("cancelled:");
    expect(code).toBe(0);
  });

  it("sampling-handler.mjs answers a sampling request from server-everything", async () => {
    const { code, out } = await run("sampling-handler.mjs", ["everything", "trigger-sampling-request", '{"prompt":"hello","maxTokens":5}']);
    expect(out).toContain("echo from everything");
    expect(code).toBe(0);
  });

  it("watch.mjs prints the servers and stops on SIGINT", async () => {
    const child = spawn(process.execPath, [join(ROOT, "examples", "watch.mjs")], { env: d.env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((r) => child.on("exit", r));
    const { waitFor } = await import("../helpers/process.js");
    await waitFor(() => out.includes("watching"), { message: "the watcher to be set up" });
    expect(out).toMatch(/^fx: \w+ \(stdio, \d+ tools\)$/m);
    child.kill("SIGINT");
    expect(await exited).toBe(0);
  });
});
