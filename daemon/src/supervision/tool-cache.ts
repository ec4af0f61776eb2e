import { join } from "node:path";
import { silentLogger, type Era, type Logger, type Tool } from "@mcpd/protocol";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import { isoTime } from "../infra/iso-time.js";
import { readPrivateFile, writePrivateFile } from "../infra/private-file.js";
import { preparePrivateDir } from "../infra/state-dir.js";

/** What is kept of one server: its tools, and the MCP era it was found to speak (so no start probes it again). */
export interface CachedServer {
  tools?: Tool[];
  era?: Era;
}

/**
 * Tools of each server on disk, keyed by server name and config hash, so a restarted daemon can list a
 * server's tools while the server itself is still starting (the startup fallback), with its era. The directory is
 * checked like the state directory (the user's own, made 0700); its files are private files
 * ({@link readPrivateFile}, {@link writePrivateFile}).
 */
export class ToolCache {
  private prepared = false;
  /** Writes under way, awaited by {@link settled} (the manager's shutdown). */
  private readonly writes = new Set<Promise<void>>();

  constructor(
    private readonly dir: string,
    private readonly log: Logger = silentLogger,
  ) {}

  private file(server: string, hash: string): string {
    return join(this.dir, `${server}-${hash}.tools.json`);
  }

  /** Creates and checks the directory once. @throws StateDirError when it is another user's. */
  private prepare(): void {
    if (this.prepared) return;
    const note = preparePrivateDir(this.dir, "tool cache directory");
    if (note) this.log.warn({ dir: this.dir }, note);
    this.prepared = true;
  }

  /**
   * The cached tools and era, or undefined when there are none usable: no file, a file that is not a
   * regular file of the user's own (a FIFO is never waited on), or one that does not parse.
   */
  async read(server: string, hash: string): Promise<CachedServer | undefined> {
    try {
      this.prepare();
      const read = readPrivateFile(this.file(server, hash), { maxBytes: RUNTIME_DEFAULTS.stateFileMaxBytes });
      if (read.kind === "unusable") this.log.warn({ server }, `ignoring the tool cache: ${read.reason}`);
      if (read.kind !== "file") return undefined;
      const parsed = JSON.parse(read.text) as { tools?: unknown; era?: unknown };
      const out: CachedServer = {};
      if (Array.isArray(parsed.tools)) out.tools = parsed.tools as Tool[];
      if (parsed.era === "2025" || parsed.era === "2026") out.era = parsed.era;
      return out.tools || out.era ? out : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Writes a new file renamed into place ({@link writePrivateFile}), so a crash never leaves half a file
   * and concurrent writes of one server, from this process or another daemon on the same directory,
   * never touch each other's temporary file: the last rename wins, and every version is a whole file.
   * @throws StateDirError when the directory is another user's; the errno error when it cannot be written.
   */
  async write(server: string, hash: string, tools: readonly Tool[], era?: Era): Promise<void> {
    this.prepare();
    writePrivateFile(
      this.file(server, hash),
      JSON.stringify({ server, hash, writtenAt: isoTime(Date.now()), tools, ...(era ? { era } : {}) }),
    );
  }

  /** What is cached of each of `servers` that has something (by name), read in parallel. */
  async readAll(servers: readonly { name: string; transportHash: string }[]): Promise<Map<string, CachedServer>> {
    const out = new Map<string, CachedServer>();
    await Promise.all(
      servers.map(async (s) => {
        const cached = await this.read(s.name, s.transportHash);
        if (cached) out.set(s.name, cached);
      }),
    );
    return out;
  }

  /** Writes `tools` (and `era`) in the background; a failure is logged to `log` (the server's), never thrown. */
  remember(server: string, hash: string, tools: readonly Tool[], log: Logger, era?: Era): void {
    const write = this.write(server, hash, tools, era).catch((err: Error) => log.warn({ err: err.message }, "tool cache write failed"));
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
  }

  /** Resolves once every write {@link remember} started has finished. */
  async settled(): Promise<void> {
    await Promise.all(this.writes);
  }
}
