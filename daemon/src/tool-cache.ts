import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Tool } from "@mcpd/protocol";

/**
 * Tools of each server on disk, keyed by server name and config hash, so a restarted daemon can list a
 * server's tools while the server itself is still starting (the startup fallback).
 */
export class ToolCache {
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

  /** Writes atomically (temp file + rename) so a crash never leaves half a file. */
  async write(server: string, hash: string, tools: readonly Tool[]): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const target = this.file(server, hash);
    const tmp = `${target}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify({ server, hash, writtenAt: new Date().toISOString(), tools }), { mode: 0o600 });
    await rename(tmp, target);
  }
}
