/** Starts tests/bench/fixtures/http-server.mjs (SDK McpServer over Streamable HTTP) and reads its port. */
import { createInterface } from "node:readline";
import { HTTP_SERVER } from "./env.mjs";

/** @param mode "json" | "sse". @returns {url, proc, stop()} */
export async function startHttpServer(resources, mode) {
  const proc = resources.spawn(`http-server-${mode}`, process.execPath, [HTTP_SERVER, `--${mode}`]);
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`http-server did not print its port within 30 s:\n${proc.tail()}`)), 30_000);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`http-server exited (${code}) before listening:\n${proc.tail()}`));
    });
    createInterface({ input: proc.stdout }).once("line", (line) => {
      clearTimeout(timer);
      resolve(JSON.parse(line).port);
    });
  });
  return { url: `http://127.0.0.1:${port}/mcp`, proc, pid: proc.pid, stop: () => resources.stop(proc, 5_000) };
}
