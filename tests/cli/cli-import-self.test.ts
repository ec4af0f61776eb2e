/**
 * `mcpd config import` never imports an entry that points back at mcpd itself (`mcpd connect` over stdio,
 * or mcpd's own HTTP front end), from Claude Code, Cursor and VS Code files where such entries sit among
 * ordinary ones; the same verdicts on a dry run and a real import.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliWorld } from "./cli-harness.js";

const SELF = "points back at mcpd itself; importing it would make mcpd its own server";
const TOKEN = "Bearer AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

let world: CliWorld;
beforeEach(() => {
  world = new CliWorld();
});
afterEach(async () => {
  await world.dispose();
});

/**
 * Imports `doc` as `from` twice, dry run then for real, and checks both: every name in `self` is skipped
 * as pointing back at mcpd (and never written), every name in `others` is added.
 */
async function importBoth(from: string, doc: unknown, self: string[], others: string[]): Promise<void> {
  const file = join(world.root, `${from}.json`);
  writeFileSync(file, JSON.stringify(doc, null, 2));
  const before = readFileSync(world.configFile, "utf8");
  for (const dryRun of [true, false]) {
    const r = await world.run(["config", "import", "--from", from, "--file", file, ...(dryRun ? ["--dry-run"] : [])]);
    const what = `${from}${dryRun ? " --dry-run" : ""}`;
    expect(r.code, `${what}: ${r.stderr}`).toBe(0);
    for (const name of self) expect(r.stdout, `${what}: ${name}`).toMatch(new RegExp(`^skipped ${name}: ${SELF} \\(.+\\) \\(from `, "m"));
    for (const name of others) expect(r.stdout, `${what}: ${name}`).toMatch(new RegExp(`^${dryRun ? "would add" : "added"} ${name} `, "m"));
    expect(r.stdout).toContain(`${others.length} ${dryRun ? "to add" : "added"}, ${self.length} skipped`);
    // The bearer token of a self entry is never shown.
    expect(r.stdout).not.toContain(TOKEN);
    if (dryRun) expect(readFileSync(world.configFile, "utf8")).toBe(before);
  }
  const written = JSON.parse(readFileSync(world.configFile, "utf8")).mcpServers as Record<string, unknown>;
  expect(Object.keys(written).sort()).toEqual([...others].sort());
}

describe("config import skips entries that point back at mcpd", () => {
  it("regression: Claude Code's `mcpd connect` (bare, by path, through npx) and mcpd's /mcp URL on the default port are skipped; the rest come in", async () => {
    world.writeConfig({});
    await importBoth(
      "claude-code",
      {
        mcpServers: {
          mcpd: { command: "mcpd", args: ["connect"] },
          "mcpd-fx": { type: "stdio", command: "/usr/local/bin/mcpd", args: ["connect", "fx"] },
          "mcpd-http": { type: "http", url: "http://127.0.0.1:7767/mcp", headers: { Authorization: TOKEN } },
          github: { command: "npx", args: ["-y", "@modelcontextprotocol/server-github"] },
          "local-api": { type: "http", url: "http://localhost:3000/mcp" },
          "mcpd-status": { command: "mcpd-tools", args: ["connect"] },
        },
        projects: {
          "/work/p": {
            mcpServers: {
              "mcpd-npx": { command: "npx", args: ["-y", "mcpd@latest", "connect", "--no-autostart"] },
              remote: { type: "http", url: "https://api.example.com/mcp" },
            },
          },
        },
      },
      ["mcpd", "mcpd-fx", "mcpd-http", "mcpd-npx"],
      ["github", "local-api", "mcpd-status", "remote"],
    );
  });

  it("regression: Cursor's server and SSE URLs of mcpd, `node .../mcpd.js connect` and an mcp-remote bridge to mcpd are skipped", async () => {
    world.writeConfig({});
    await importBoth(
      "cursor",
      {
        mcpServers: {
          "mcpd-fx": { url: "http://localhost:7767/servers/fx/mcp", headers: { Authorization: TOKEN } },
          "mcpd-sse": { url: "http://[::1]:7767/sse/" },
          "mcpd-node": { command: "node", args: ["--no-warnings", "/opt/mcpd/daemon/bin/mcpd.js", "connect"] },
          bridge: {
            command: "npx",
            args: ["-y", "mcp-remote", "http://127.0.0.1:7767/servers/gh/sse", "--header", `Authorization:${TOKEN}`],
          },
          time: { command: "uvx", args: ["mcp-server-time"] },
          "not-mcpd-path": { url: "http://127.0.0.1:7767/api/mcp" },
        },
      },
      ["mcpd-fx", "mcpd-sse", "mcpd-node", "bridge"],
      ["time", "not-mcpd-path"],
    );
  });

  it("regression: VS Code entries on the port mcpd's config file sets (mcpd.http.port) are skipped; one on another port comes in", async () => {
    world.writeConfig({}, { mcpd: { http: { port: 9999 } } });
    await importBoth(
      "vscode",
      {
        servers: {
          mcpd: { type: "http", url: "http://127.0.0.1:9999/mcp", headers: { Authorization: TOKEN } },
          "mcpd-legacy": { type: "sse", url: "http://localhost:9999/servers/x/sse" },
          "mcpd-bin": { type: "stdio", command: "/home/me/.local/bin/mcpd", args: ["connect"] },
          "old-port": { type: "http", url: "http://127.0.0.1:7767/mcp" },
          memory: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] },
        },
      },
      ["mcpd", "mcpd-legacy", "mcpd-bin"],
      ["old-port", "memory"],
    );
  });
});
