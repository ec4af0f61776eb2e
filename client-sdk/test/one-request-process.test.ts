/**
 * requestOnce in a process of its own (the compiled client, as a command runs it), against a real socket
 * peer in this one: what only a whole process shows, that it exits when it should, and what a caller's
 * throwing callback does to it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type JsonlPeer, startPeer, waitFor } from "./jsonl-peer.js";

const ONE_REQUEST = fileURLToPath(new URL("../dist/one-request.js", import.meta.url));

let peer: JsonlPeer;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];

beforeEach(async () => {
  ({ peer, cleanup } = await startPeer());
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await cleanup();
});

/** Runs `body` (an ES module body with `requestOnce` and `socketPath` in scope) in a fresh Node process. */
function run(body: string): { child: ChildProcess; out: () => string } {
  const script = `import { requestOnce } from ${JSON.stringify(ONE_REQUEST)};\nconst socketPath = ${JSON.stringify(peer.socketPath)};\n${body}`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  return { child, out: () => out };
}

describe("requestOnce in a process of its own", () => {
  it("exits once the call gave up on a daemon that stopped reading, however much was left unsent (regression: it never exited)", async () => {
    // The peer reads the select, then nothing more: the 3 MB request stays in the socket's buffers.
    peer.methods["mcpd/select"] = (_params, conn) => {
      conn.socket.pause();
      return undefined;
    };
    const { child, out } = run(`
      const big = { name: "x", arguments: { blob: "x".repeat(3_000_000) } };
      await requestOnce("tools/call", big, { socketPath, connectTimeout: 300 }).catch((e) => console.log("rejected", e.code));
    `);
    await waitFor(() => child.exitCode !== null, `the process to exit (output so far: ${out()})`, 20_000);
    expect(out()).toContain("rejected MCPD_DAEMON_UNAVAILABLE");
    expect(child.exitCode).toBe(0);
  });

  it("a throwing onProgress is the caller's uncaught error, and the answer in the same read is not lost (regression: the rest of the chunk was)", async () => {
    peer.methods["tools/call"] = (params, conn) => {
      // The progress and the answer in one write: one read on the other side.
      conn.writeRaw(
        `${JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: params._meta.progressToken, progress: 1 } })}\n` +
          `${JSON.stringify({ jsonrpc: "2.0", id: conn.received.at(-1)?.id, result: { content: [{ type: "text", text: "answered" }] } })}\n`,
      );
      return undefined;
    };
    const { child, out } = run(`
      process.on("uncaughtException", (e) => console.log("uncaught", e.message));
      const r = await requestOnce("tools/call", { name: "p" }, { socketPath, onProgress: () => { throw new Error("listener bug"); } });
      console.log("result", r.content[0].text);
    `);
    await waitFor(() => child.exitCode !== null, `the process to exit (output so far: ${out()})`, 20_000);
    expect(out()).toContain("uncaught listener bug");
    expect(out()).toContain("result answered");
  });
});
