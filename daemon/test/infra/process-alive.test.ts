import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { isPidAlive } from "../../src/infra/process-alive.js";
import { waitFor } from "../../../tests/helpers/process.js";

const started: ChildProcess[] = [];

afterEach(async () => {
  for (const child of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  }
});

function start(command: string, args: string[], detached = false): ChildProcess {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "ignore"], detached });
  started.push(child);
  return child;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
}

describe("isPidAlive: the one answer to 'is this pid alive' for the daemon and the CLI", () => {
  it("is true for a running process and false once it has exited and been reaped", async () => {
    expect(isPidAlive(process.pid)).toBe(true);
    const child = start(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"]);
    expect(child.pid).toBeTypeOf("number");
    const pid = child.pid as number;
    expect(isPidAlive(pid)).toBe(true);
    child.kill("SIGKILL");
    await exited(child);
    await waitFor(() => !isPidAlive(pid), { message: `pid ${pid} reported gone` });
  });

  it("asks about a process group when given a negative id", async () => {
    const child = start(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], true);
    const pgid = child.pid as number;
    expect(isPidAlive(-pgid)).toBe(true);
    process.kill(-pgid, "SIGKILL");
    await exited(child);
    await waitFor(() => !isPidAlive(-pgid), { message: `group ${pgid} reported gone` });
  });

  it.runIf(process.platform === "linux")("counts a zombie (exited, never reaped) as dead", async () => {
    // The subshell exits once its parent has become `sleep` (which never reaps it): not before, when the
    // shell could still reap it (a child that exited at once was, now and then, on a loaded machine).
    const parent = start("/bin/sh", ["-c", '(while [ "$(cat /proc/$$/comm)" != sleep ]; do sleep 0.01; done) & echo $!; exec sleep 60']);
    let out = "";
    parent.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const zombie = await waitFor(() => Number.parseInt(out.trim(), 10) || undefined, { message: "the child's pid" });
    const state = () => {
      const stat = readFileSync(`/proc/${zombie}/stat`, "utf8");
      return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    };
    await waitFor(() => state() === "Z", { message: `pid ${zombie} to become a zombie` });
    expect(() => process.kill(zombie, 0)).not.toThrow();
    expect(isPidAlive(zombie)).toBe(false);
  });
});
