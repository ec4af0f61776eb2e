import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Tool } from "@mcpd/protocol";
import { isoTime } from "../infra/iso-time.js";

/**
 * Tools of each server on disk, keyed by server name and config hash, so a restarted daemon can list a
 * server's tools while the server itself is still starting (the startup fallback).
 */
export class ToolCache {
  /** Numbers this process's writes, so two of them never share a temporary file. */
  private static writes = 0;

  constructor(private readonly dir: string) {}

  private file(server: string, hash: string): string {
    return join(this.dir, `${server}-${hash}.tools.json`);
  }

  async read(server: string, hash: string): Promise<Tool[] | undefined> {
    try {
      const parsed = JSON.parse(await readFile(this.file(server, hash), "utf8")) as { tools?: unknown };
      return Array.isArray(parsed.tools) ? (parsed.tools as Tool[]) : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Writes atomically (temp file + rename) so a crash never leaves half a file. Each write has its own
   * temporary file (pid, a per-process sequence number and random bytes: concurrent writes of one
   * server, from this process or another daemon on the same directory, never rename each other's file);
   * the last rename wins, and every version is a whole file. A failed write removes its temporary file.
   */
  async write(server: string, hash: string, tools: readonly Tool[]): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const target = this.file(server, hash);
    const tmp = `${target}.${process.pid}.${++ToolCache.writes}.${randomBytes(4).toString("hex")}.tmp`;
    try {
      await writeFile(tmp, JSON.stringify({ server, hash, writtenAt: isoTime(Date.now()), tools }), { mode: 0o600, flag: "wx" });
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => {});
      throw err;
    }
  }
}
