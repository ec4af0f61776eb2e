/**
 * The daemon's real parts, assembled in-process for a test: a temporary directory, an MCPManager over the
 * real transports (with servers from a config's `mcpServers`), and a socket face on a real Router. Each
 * registers its own cleanup in the test's list, run in reverse order after the test.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTransport } from "@mcpd/transports";
import { parseConfig } from "../../src/config/index.js";
import type { GarbagePacer } from "../../src/infra/garbage-pacer.js";
import { BufferBudget } from "../../src/infra/buffer-budget.js";
import { Router } from "../../src/router/router.js";
import { SocketServer } from "../../src/socket/socket-server.js";
import { MCPManager } from "../../src/supervision/manager.js";
import { ManagerDirectory } from "../../src/composition/manager-directory.js";

/** Cleanups a test runs after it, last first. */
export type Cleanups = Array<() => unknown>;

/** A temporary directory, removed after the test. */
export function tempDir(cleanups: Cleanups, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A manager keeping its state in `dir`; with `servers` (a config's `mcpServers`), those are started. */
export async function startManager(cleanups: Cleanups, dir: string, servers?: Record<string, unknown>): Promise<MCPManager> {
  const manager = new MCPManager({
    createTransport: (cfg, logger) => createTransport(cfg, { logger }),
    cacheDir: join(dir, "cache"),
    childrenFile: join(dir, "children.json"),
  });
  cleanups.push(() => manager.shutdown());
  if (servers !== undefined)
    await manager.discoverAndConnect(parseConfig(JSON.stringify({ mcpServers: servers }), join(dir, "config.json"), process.env));
  return manager;
}

/** A socket face on a Router over `manager`, listening on `dir`/s.sock. */
export async function startSocketFace(
  cleanups: Cleanups,
  dir: string,
  manager: MCPManager,
  options: { maxInFlightPerConnection: number; maxOutgoingBytes: number; pacer?: GarbagePacer },
): Promise<{ server: SocketServer; router: Router; socketPath: string }> {
  const router = new Router(new ManagerDirectory(manager), {
    maxInFlightPerConnection: options.maxInFlightPerConnection,
    clientRequestTimeoutMs: 10_000,
    control: async () => ({}),
  });
  const socketPath = join(dir, "s.sock");
  const server = new SocketServer({
    socketPath,
    router,
    maxLineBytes: 1 << 20,
    maxOutgoingBytes: options.maxOutgoingBytes,
    limits: { maxConnections: 16, maxConnectionsWhy: "test", partialLineTimeoutMs: 10_000 },
    budget: new BufferBudget(1 << 24),
    ...(options.pacer ? { pacer: options.pacer } : {}),
  });
  await server.listen();
  cleanups.push(() => {
    server.closeAll();
    server.stopAccepting();
  });
  return { server, router, socketPath };
}
