/** The realistic server sets of the start-up and footprint scenarios (real npm servers and the test fixture). */
import { join } from "node:path";
import { EVERYTHING, MCP_FIXTURE, MEMORY } from "./env.mjs";

/**
 * `count` servers: server-everything, server-memory (its file in `dir`), then mcp-fixture copies.
 * @returns {name, command, args, env}[] usable both as SDK stdio params and as mcpd config entries.
 */
export function realisticServers(count, dir) {
  const list = [
    { name: "everything", command: process.execPath, args: [EVERYTHING, "stdio"], env: {} },
    { name: "memory", command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } },
  ];
  for (let i = 1; list.length < count; i++)
    list.push({ name: `fixture${i}`, command: process.execPath, args: [MCP_FIXTURE, "--name", `fixture${i}`], env: {} });
  return list.slice(0, count);
}

/** mcpd `mcpServers` entries for a list from {@link realisticServers}. */
export function asConfig(list) {
  return Object.fromEntries(
    list.map((s) => [s.name, { command: s.command, args: s.args, ...(Object.keys(s.env).length ? { env: s.env } : {}) }]),
  );
}
