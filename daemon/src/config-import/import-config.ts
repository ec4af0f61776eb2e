import { copyFile, mkdir, readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { ConfigError } from "@mcpd/protocol";
import { parseConfig } from "../config/parse-config.js";
import { parseJsonc } from "../config/parse-jsonc.js";
import { writePrivateFile } from "../infra/private-file.js";
import { scanClaudeCode } from "./claude-code.js";
import { scanClaudeDesktop } from "./claude-desktop.js";
import { scanCursor } from "./cursor.js";
import type { FoundServer, ImportContext, ImportSource, SourceScan } from "./import-types.js";
import { cleanEntry, mergeServers, type MergeOutcome } from "./merge-servers.js";
import { mcpdEndpoints, selfReference } from "./self-reference.js";
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
   * The variables entries are checked with, as the daemon will load them: `${NAME:-default}` resolves
   * from here; `${NAME}` whose variable is unset here is not an error (the daemon's environment may have
   * it) but a note. Default `process.env`.
   */
  env?: NodeJS.ProcessEnv;
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
  const stamp = now
    .toISOString()
    .replace(/\.\d{3}Z$/, "Z")
    .replace(/[-:]/g, "");
  return `${configFile}.bak-${stamp}`;
}

/**
 * Checks one found server as mcpd will load it (with the config file's own `mcpd` section, unset
 * variables deferred to the daemon). Warnings about it become notes of `found`.
 * @returns why mcpd would refuse it, or undefined when it loads.
 */
function checkEntry(found: FoundServer, mcpdSection: unknown, file: string, env: NodeJS.ProcessEnv): string | undefined {
  const doc: Record<string, unknown> = { mcpServers: { [found.name]: cleanEntry(found.entry) } };
  if (mcpdSection !== undefined) doc.mcpd = mcpdSection;
  // parseConfig's lines name the file and the server; the report already says which server it is.
  const prefix = `${resolve(file)}: server "${found.name}": `;
  const strip = (line: string): string => (line.startsWith(prefix) ? line.slice(prefix.length) : line);
  try {
    const loaded = parseConfig(JSON.stringify(doc), file, env, { unsetVariables: "defer" });
    for (const w of loaded.warnings) if (w.startsWith(prefix)) found.notes.push(strip(w));
    return undefined;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.message.split("\n").map(strip).join("; ");
  }
}

/**
 * Imports the MCP servers of another client's config into mcpd's config file: scans the source, skips
 * every entry that points back at mcpd itself (`mcpd connect`, mcpd's own HTTP front end: see
 * {@link selfReference}), checks every other one as the daemon will load it (one it would refuse is
 * skipped with the reason, the others still come in), merges (never overwriting an existing server),
 * backs the old file up as `<file>.bak-<timestamp>` and writes the new one atomically (mode 0600: it may
 * hold tokens). `dryRun` runs every check and reports the same outcomes, entries and notes, but writes
 * nothing; nothing is written either when nothing was added. A comment in the old file survives only
 * in the backup.
 * @throws ConfigError for a source or config file that does not parse (naming file, line, column), and
 * for a config file mcpd would refuse as it is (fix it first); Error for unreadable files.
 */
export async function importConfig(options: ImportOptions): Promise<ImportReport> {
  const env = options.env ?? process.env;
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
  if (existed) {
    try {
      parseConfig(JSON.stringify(current), options.configFile, env, { unsetVariables: "defer" });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      throw new ConfigError(`mcpd's config file is not valid as it is; fix it before importing:\n${err.message}`, { cause: err });
    }
  }
  const usable: FoundServer[] = [];
  const endpoints = mcpdEndpoints(current.mcpd, env);
  for (const found of scan.servers) {
    const refused = selfReference(found.entry, endpoints) ?? checkEntry(found, current.mcpd, options.configFile, env);
    if (refused === undefined) usable.push(found);
    else scan.unusable.push({ name: found.name, origin: found.origin, reason: refused });
  }
  scan.servers = usable;
  const { config, outcomes } = mergeServers(current, scan.servers);
  const report: ImportReport = { scan, outcomes, written: false };
  const text = `${JSON.stringify(config, null, 2)}\n`;
  // Every part passed on its own; the whole must load too (a dry run checks exactly what would be written).
  parseConfig(text, options.configFile, env, { unsetVariables: "defer" });
  if (options.dryRun || !outcomes.some((o) => o.action === "added")) return report;

  await mkdir(dirname(options.configFile), { recursive: true, mode: 0o700 });
  if (existed) {
    report.backup = backupName(options.configFile, options.now ?? new Date());
    await copyFile(options.configFile, report.backup);
  }
  // A new file renamed into place, so a crash mid-write never leaves a truncated config for the daemon to load.
  writePrivateFile(options.configFile, text);
  report.written = true;
  return report;
}
