import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { emptyScan, type ImportContext, type SourceScan } from "./import-types.js";
import { convertServerMap, type VariableRules } from "./normalize-entry.js";
import { applyClaudeCodePermissions } from "./claude-code-permissions.js";
import { readClientFile } from "./read-client-file.js";

// Claude Code expands `${VAR}` and `${VAR:-default}` from the environment, exactly as mcpd does.
const RULES: VariableRules = { vars: {}, bareIsEnv: true };

/**
 * Converts a map of project-scoped servers: Claude Code runs them in the project's directory, so a stdio
 * entry without a `cwd` gets `dir` (else its relative arguments would resolve wherever mcpd runs).
 */
function convertProjectMap(map: unknown, origin: string, dir: string, scan: SourceScan): void {
  const before = scan.servers.length;
  convertServerMap(map, origin, RULES, scan);
  if (!isAbsolute(dir)) return;
  for (const found of scan.servers.slice(before)) {
    if (found.entry.command === undefined || found.entry.cwd !== undefined) continue;
    found.entry.cwd = dir;
    found.notes.push(`runs in its project's directory ${dir}, as in Claude Code`);
  }
}

/**
 * Reads one Claude Code file: top-level `mcpServers` (user scope; project scope in a `.mcp.json`, whose
 * directory is the project's) and `projects.<dir>.mcpServers` (local scope).
 */
function scanClaudeCodeDoc(doc: unknown, file: string, scan: SourceScan): void {
  const d = (typeof doc === "object" && doc !== null ? doc : {}) as { mcpServers?: unknown; projects?: unknown };
  if (basename(file) === ".mcp.json") convertProjectMap(d.mcpServers, file, dirname(resolve(file)), scan);
  else convertServerMap(d.mcpServers, file, RULES, scan);
  if (typeof d.projects === "object" && d.projects !== null && !Array.isArray(d.projects)) {
    for (const [dir, project] of Object.entries(d.projects)) {
      const servers = (project as { mcpServers?: unknown } | null)?.mcpServers;
      convertProjectMap(servers, `${file} (project ${dir})`, dir, scan);
    }
  }
}

/**
 * Reads Claude Code's servers: `~/.claude.json` (user and per-project entries) and `.mcp.json` in the
 * current directory (project scope), or only `ctx.file`. From the default locations, its permission
 * rules that deny MCP tools are carried over as server-level tools filters (claude-code-permissions.ts).
 */
export async function scanClaudeCode(ctx: ImportContext): Promise<SourceScan> {
  const scan = emptyScan();
  const userFile = join(ctx.home, ".claude.json");
  const files = ctx.file ? [ctx.file] : [userFile, join(ctx.cwd, ".mcp.json")];
  let userDoc: unknown;
  for (const file of files) {
    const doc = await readClientFile(file);
    if (doc === undefined) {
      scan.missing.push(file);
      continue;
    }
    scan.read.push(file);
    if (file === userFile) userDoc = doc;
    scanClaudeCodeDoc(doc, file, scan);
  }
  if (!ctx.file) await applyClaudeCodePermissions(ctx, scan, userDoc);
  return scan;
}
