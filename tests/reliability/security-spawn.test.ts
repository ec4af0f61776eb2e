/**
 * Servers are spawned without a shell, whatever their config contains: shell syntax in `args` and `env`
 * arrives literally (the fixture's `argv` and `env` tools show it), shell syntax in `command` is a
 * command name that does not exist, and no marker file any of it names is ever created: not at start,
 * not when the servers exit (`; cmd` and `&& cmd` would run then).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fixture, startTestDaemon, until, type TestDaemon } from "../e2e/harness.js";

let daemon: TestDaemon | undefined;
let dir: string | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Shell syntax that would create `marker` if any shell ever saw it. */
function attacks(marker: (n: number) => string): string[] {
  return [
    `; touch ${marker(1)}`,
    `$(touch ${marker(2)})`,
    `\`touch ${marker(3)}\``,
    `| touch ${marker(4)}`,
    `&& touch ${marker(5)}`,
    `|| touch ${marker(6)}`,
    `> ${marker(7)}`,
    `x'; touch ${marker(8)}; echo '`,
    `x"; touch ${marker(9)}; echo "`,
    `\n touch ${marker(10)}`,
    `& touch ${marker(11)} &`,
    // $IFS, not ${IFS}: the config itself expands ${VAR} (and refuses unset ones); $IFS only a shell would.
    `x;touch$IFS${marker(12)}`,
  ];
}

const text = (r: any): string => r.result?.content?.[0]?.text ?? JSON.stringify(r.error);

describe("servers are spawned without a shell", () => {
  it("shell syntax in args and env arrives literally, in command it is just a missing command; no marker file ever appears", async () => {
    dir = mkdtempSync(join(tmpdir(), "mcpd-sh-"));
    const marker = (n: number): string => join(dir as string, `marker-${n}`);
    const evil = attacks(marker);
    const cmdMarker = (n: number): string => marker(100 + n);
    const d = (daemon = await startTestDaemon({
      // Every attack string as a separate argument value (the fixture takes any string after --tool).
      args: fixture(
        "args",
        evil.flatMap((a) => ["--tool", a]),
      ),
      // Every attack string as an env value.
      env: fixture("env", [], { env: Object.fromEntries(evil.map((a, i) => [`EVIL_${i}`, a])) }),
      // Shell syntax in the command itself.
      cmd1: { command: `${process.execPath}; touch ${cmdMarker(1)}`, restart: { maxRestarts: 1, initialDelayMs: 50 } },
      cmd2: { command: `$(touch ${cmdMarker(2)})`, restart: { maxRestarts: 1, initialDelayMs: 50 } },
      cmd3: { command: `\`touch ${cmdMarker(3)}\``, restart: { maxRestarts: 1, initialDelayMs: 50 } },
      cmd4: {
        command: `${process.execPath} -e "require('fs').writeFileSync('${cmdMarker(4)}', '')"`,
        restart: { maxRestarts: 1, initialDelayMs: 50 },
      },
    }));
    // lastError is in the full status: a control connection's.
    const c = await d.control();
    await c.initialize();
    const status = async (): Promise<Record<string, { state: string; lastError: string | null; stateReason: string }>> =>
      Object.fromEntries((await c.request("mcpd/status")).result.servers.map((s: any) => [s.name, s]));
    await until(
      async () => {
        const s = await status();
        return (
          s.args?.state === "ready" && s.env?.state === "ready" && ["cmd1", "cmd2", "cmd3", "cmd4"].every((n) => s[n]?.state === "failed")
        );
      },
      "fixtures ready and the shell-syntax commands failed",
      30_000,
    );

    // Arguments: exactly as configured, one argv entry each.
    const argv = JSON.parse(text(await c.request("tools/call", { name: "argv", arguments: {}, _meta: { "mcpd/server": "args" } })));
    expect(argv).toEqual(["--name", "args", ...evil.flatMap((a) => ["--tool", a])]);
    // Env: exactly as configured.
    const env = JSON.parse(text(await c.request("tools/call", { name: "env", arguments: {}, _meta: { "mcpd/server": "env" } })));
    for (const [i, a] of evil.entries()) expect(env[`EVIL_${i}`], `EVIL_${i}`).toBe(a);
    // Commands: not found as written (the whole string is the file name), never split or interpreted.
    const s = await status();
    for (const n of ["cmd1", "cmd2", "cmd3", "cmd4"]) expect(`${s[n]?.stateReason} ${s[n]?.lastError}`, n).toMatch(/ENOENT|not found/i);

    // `; cmd`, `&& cmd` and `|| cmd` would run when the servers exit: stop them all, then look.
    await d.stop();
    daemon = undefined;
    const left = readdirSync(dir as string);
    expect(left, "marker files created by a shell").toEqual([]);
    for (let n = 1; n <= 12; n++) expect(existsSync(marker(n))).toBe(false);
  });
});
