import { copyFile, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { parseJsonc } from "../config/parse-jsonc.js";
import { scanClaudeCode } from "./claude-code.js";
import { scanClaudeDesktop } from "./claude-desktop.js";
import { scanCursor } from "./cursor.js";
import type { ImportContext, ImportSource, SourceScan } from "./import-types.js";
import { mergeServers, type MergeOutcome } from "./merge-servers.js";
import { scanVscode } from "./vscode.js";

const SCANNERS: Record<ImportSource, (ctx: ImportContext) => Promise<SourceScan>> = {
  "claude-desktop": scanClaudeDesktop,
  "claude-code": scanClaudeCode,
  cursor: scanCursor,
  vscode: scanVscode,
};

/** Options of {@link importConfig}. */
export interface ImportOptions extends ImportContext {
  from: ImportSource;
  /** mcpd's config file to merge into (created when missing). */
  configFile: string;
  /** Report only; write nothing. */
  dryRun: boolean;
  /** Clock for the backup name (tests). Default `new Date()`. */
  now?: Date;
  /**
   * Checks the merged document before it is written; throws (a ConfigError naming the problem) when mcpd
   * would refuse it. Nothing is written then.
   */
  validate?: (text: string, file: string) => void;
}

/** What {@link importConfig} found and did. */
export interface ImportReport {
  scan: SourceScan;
  outcomes: MergeOutcome[];
  /** The backup of the previous config, when one was written. */
  backup?: string;
  /** Whether the config file was written. */
  written: boolean;
}

/** `config.json.bak-20250102T030405Z`: sortable, no `:` (awkward in file names on some systems). */
export function backupName(configFile: string, now: Date): string {
  const stamp = now.toISOString().replace(/\.\d{3}Z$/, "Z").replace(/[-:]/g, "");
  return `${configFile}.bak-${stamp}`;
}

/**
 * Imports the MCP servers of another client's config into mcpd's config file: scans the source, merges
 * (never overwriting an existing server), backs the old file up as `<file>.bak-<timestamp>` and writes
 * the new one atomically (mode 0600: it may hold tokens). Writes nothing when nothing was added or on
 * `dryRun`. A comment in the old file survives only in the backup.
 * @throws ConfigError for a source or config file that does not parse (naming file, line, column);
 * Error for unreadable files.
 */
export async function importConfig(options: ImportOptions): Promise<ImportReport> {
  const scan = await SCANNERS[options.from](options);
  let current: Record<string, unknown> = {};
  let existed = false;
  try {
    const text = await readFile(options.configFile, "utf8");
    existed = true;
    const value = parseJsonc(text, options.configFile).value;
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new Error(`${options.configFile} is not a JSON object; fix it before importing`);
    }
    current = value as Record<string, unknown>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const { config, outcomes } = mergeServers(current, scan.servers);
  const report: ImportReport = { scan, outcomes, written: false };
  if (options.dryRun || !outcomes.some((o) => o.action === "added")) return report;

  const text = `${JSON.stringify(config, null, 2)}\n`;
  options.validate?.(text, options.configFile);
  await mkdir(dirname(options.configFile), { recursive: true, mode: 0o700 });
  if (existed) {
    report.backup = backupName(options.configFile, options.now ?? new Date());
    await copyFile(options.configFile, report.backup);
  }
  // Write then rename, so a crash mid-write never leaves a truncated config for the daemon to load.
  const tmp = `${options.configFile}.tmp-${process.pid}`;
  await writeFile(tmp, text, { mode: 0o600 });
  await rename(tmp, options.configFile);
  report.written = true;
  return report;
}
