/**
 * Regression: every command died with an unhandled EPIPE stack trace when its output went to a pipe whose
 * reader had already gone (`mcpd http | head -1`, `mcpd tools | grep -q x`). A closed pipe is the reader's
 * choice, not an error: the command ends quietly.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { MCPD_BIN } from "../e2e/harness.js";

describe("a command whose stdout reader went away", () => {
  it("ends without a stack trace (regression: unhandled EPIPE)", async () => {
    const child = spawn(process.execPath, [MCPD_BIN, "help"], { stdio: ["ignore", "pipe", "pipe"] });
    // Close our end before the command writes a byte: every write it makes gets EPIPE.
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("close", (c) => resolve(c)));
    expect(stderr).not.toMatch(/EPIPE|Unhandled|at .*\.js:\d+/);
    expect(code).toBe(0);
  });
});
