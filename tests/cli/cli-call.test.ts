import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { CliWorld, MCPD_BIN, ROOT, until } from "./cli-harness.js";

// One daemon for every call test: calls do not change its state.
let world: CliWorld;
beforeAll(async () => {
  world = new CliWorld();
  const everything = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
  world.writeConfig({ fx: world.fixture("fx"), everything: { command: process.execPath, args: [everything, "stdio"] } });
  const r = await world.run(["start"]);
  if (r.code !== 0) throw new Error(`start failed: ${r.stderr}`);
  await until(
    async () => JSON.parse((await world.run(["status", "--json"])).stdout).servers.every((x: { state: string }) => x.state === "ready"),
    "servers ready",
  );
});
afterAll(async () => {
  await world?.run(["stop"]);
  await world?.dispose();
});

const HAS_SCRIPT = spawnSync("sh", ["-c", "command -v script"]).status === 0;

describe("mcpd call", () => {
  it("prints text content; arguments from JSON and --arg (JSON when it parses)", async () => {
    const r = await world.run(["call", "fx", "echo", '{"text": "from json"}']);
    expect(r).toMatchObject({ code: 0, stdout: "from json\n", stderr: "" });
    const add = await world.run(["call", "fx", "add", '{"a": 1, "b": 100}', "--arg", "b=2"]);
    expect(add.stdout.trim()).toBe("3");
    // `--arg text=007` parses as JSON 7, which the tool refuses; a quoted value stays a string.
    const str = await world.run(["call", "fx", "echo", "--arg", 'text="007"']);
    expect(str.stdout.trim()).toBe("007");
  });

  it("--json prints the raw result; isError exits 1", async () => {
    const r = await world.run(["call", "fx", "echo", "--arg", "text=hi", "--json"]);
    expect(JSON.parse(r.stdout)).toEqual({ content: [{ type: "text", text: "hi" }] });
    const fail = await world.run(["call", "fx", "fail"]);
    expect(fail.code).toBe(1);
    expect(fail.stdout).not.toBe("");
  });

  it("summarises non-text content", async () => {
    const image = await world.run(["call", "everything", "get-tiny-image"]);
    expect(image.code).toBe(0);
    expect(image.stdout).toMatch(/^\[image image\/png \d+ bytes\]$/m);
    expect(image.stdout).not.toMatch(/[A-Za-z0-9+/]{200}/);
  });

  it("a failing call exits 1 with the error on stderr", async () => {
    const unknown = await world.run(["call", "fx", "no-such-tool"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no-such-tool/);
    const unknownServer = await world.run(["call", "nope", "echo"]);
    expect(unknownServer.code).toBe(1);
    expect(unknownServer.stderr).toMatch(/nope/);
  });

  it("usage errors exit 2 with a hint", async () => {
    for (const args of [
      ["call", "fx"],
      ["call", "fx", "echo", "[1]"],
      ["call", "fx", "echo", "{bad"],
      ["call", "fx", "echo", "--arg", "novalue"],
      ["call", "fx", "echo", "--timeout", "soon"],
    ]) {
      const r = await world.run(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toContain("Run 'mcpd help call' for usage.");
    }
  });

  it("draws a progress bar on stderr under a pseudo-terminal, none when piped", async () => {
    // script(1) from util-linux gives the command a pseudo-terminal; the suite requires it.
    expect(HAS_SCRIPT).toBe(true);
    const cmd = `${process.execPath} ${MCPD_BIN} call fx progress --arg steps=4 --arg intervalMs=20`;
    const tty = await world.shell(`script -qfec '${cmd}' /dev/null`);
    expect(tty.code).toBe(0);
    // script merges the pty's stdout and stderr: the bar lines come before the result.
    expect(tty.stdout).toMatch(/\[#+-*\] +\d+% \d\/4/);
    expect(tty.stdout).toContain("100% 4/4");
    expect(tty.stdout).toContain("done");

    const piped = await world.run(["call", "fx", "progress", "--arg", "steps=4", "--arg", "intervalMs=20"]);
    expect(piped.code).toBe(0);
    expect(piped.stdout.trim()).toBe("done");
    expect(piped.stderr).toBe("");
  });

  it("status is coloured on a terminal, and not with NO_COLOR", async () => {
    const status = `${process.execPath} ${MCPD_BIN} status`;
    const coloured = await world.shell(`env -u NO_COLOR script -qfec '${status}' /dev/null`);
    expect(coloured.code).toBe(0);
    expect(coloured.stdout).toContain("\u001b[32mready\u001b[39m");
    const plain = await world.shell(`NO_COLOR=1 script -qfec '${status}' /dev/null`);
    expect(plain.stdout).toMatch(/ready/);
    expect(plain.stdout).not.toContain("\u001b[");
  });

  it("Ctrl-C cancels the call upstream (notifications/cancelled) and exits 130", async () => {
    const call = world.spawn(["call", "fx", "slow", "--arg", "ms=60000"]);
    let err = "";
    call.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    const slow = await until(
      () => world.received("fx").find((m) => m.method === "tools/call" && (m.params as { name?: string })?.name === "slow"),
      "the slow call to reach the server",
    );
    const exited = new Promise<number | null>((r) => call.once("exit", (code) => r(code)));
    call.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(err).toContain("call cancelled");
    const cancel = await until(
      () => world.received("fx").find((m) => m.method === "notifications/cancelled"),
      "notifications/cancelled upstream",
    );
    expect(cancel.params?.requestId).toBe(slow.id);
  });
});
