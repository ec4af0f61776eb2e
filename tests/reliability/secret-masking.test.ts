/**
 * What mcpd masks in its own messages: secrets (here a GitHub token in `env`) never come out, while
 * what is not secret (the server's name, which its env also holds, `production`, a path, a user name)
 * comes out as it is. Real daemon, real fixture server, the CLI and a raw socket client.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CliWorld, until } from "../cli/cli-harness.js";
import { RawClient } from "../e2e/harness.js";

let world: CliWorld | undefined;
afterEach(async () => {
  await world?.dispose();
  world = undefined;
});

describe("secret masking", () => {
  it("regression: a server whose env holds its own name and `production` shows both unmasked; its token stays masked", {
    timeout: 120_000,
  }, async () => {
    const w = (world = new CliWorld());
    const token = `ghp_${randomBytes(27).toString("base64url").replace(/[-_]/g, "x").slice(0, 36)}`;
    const home = join(w.home, "warehouse-data");
    w.writeConfig({
      warehouse: w.fixture("warehouse", [], {
        env: { SERVER_NAME: "warehouse", NODE_ENV: "production", DATA_DIR: home, OWNER: "alice.smith", GITHUB_TOKEN: token },
      }),
    });
    expect((await w.run(["start", "--log-level", "debug"])).code).toBe(0);
    const outputs: string[] = [];
    const c = await RawClient.open(join(w.mcpdHome, "mcpd.sock"));
    try {
      await c.initialize();
      await until(async () => (await c.request("mcpd/status")).result.servers[0]?.state === "ready", "warehouse ready", 30_000);

      // An error naming the server's tool.
      const unknown = await c.request("tools/call", { name: "warehouse__nope", arguments: {} });
      outputs.push(JSON.stringify(unknown));
      expect(unknown.error.message).toContain('"warehouse__nope"');

      // The server's stderr, holding all four values and the token.
      const line = `NODE_ENV=production SERVER_NAME=warehouse DATA_DIR=${home} OWNER=alice.smith GITHUB_TOKEN=${token}`;
      await c.request("tools/call", { name: "warehouse__stderr", arguments: { text: line } });
      const masked = `NODE_ENV=production SERVER_NAME=warehouse DATA_DIR=${home} OWNER=alice.smith GITHUB_TOKEN=***`;
      await until(
        async () => (await w.run(["logs", "warehouse"])).stdout.includes(masked),
        "the masked stderr line in mcpd logs warehouse",
      );
      outputs.push(JSON.stringify(await c.request("mcpd/logs", { server: "warehouse", lines: 100 })));
    } finally {
      c.close();
    }

    const statusJson = await w.run(["status", "--json"]);
    outputs.push(statusJson.stdout);
    expect(JSON.parse(statusJson.stdout).servers.map((s: { name: string }) => s.name)).toEqual(["warehouse"]);
    const status = await w.run(["status"]);
    outputs.push(status.stdout);
    expect(status.stdout).toMatch(/^warehouse +ready /m);
    const tools = await w.run(["tools"]);
    outputs.push(tools.stdout);
    expect(tools.stdout).toMatch(/^warehouse__echo +warehouse +echo/m);
    const call = await w.run(["call", "warehouse", "nope"]);
    outputs.push(call.stderr);
    expect(call.stderr).toContain("nope");
    expect(call.stderr).not.toContain("***");
    // The daemon's own log names the server (its lines carry `server`).
    const log = await w.run(["logs", "-n", "1000"]);
    outputs.push(log.stdout);
    expect(log.stdout).toMatch(/server=warehouse/);

    const all = outputs.join("\n");
    expect(all).not.toContain(token);
    expect(all).not.toContain(encodeURIComponent(token));
    expect(all).not.toMatch(/\*\*\*__/);
  });
});
