import { basename, dirname, join } from "node:path";
import { emptyScan, type ImportContext, type SourceScan } from "./import-types.js";
import { convertServerMap, type VariableRules } from "./normalize-entry.js";
import { readClientFile } from "./read-client-file.js";
import { toggleWarning } from "./tool-toggles.js";

/**
 * Cursor's variables (`${userHome}`, `${workspaceFolder}`, `${workspaceFolderBasename}`,
 * `${pathSeparator}`); environment variables are written `${env:NAME}`, which mcpd also reads.
 * `workspace` is the project directory for a project file, undefined for the global one.
 */
function rules(home: string, workspace: string | undefined): VariableRules {
  const vars: Record<string, string> = { userHome: home, pathSeparator: "/", "/": "/" };
  if (workspace) {
    vars.workspaceFolder = workspace;
    vars.workspaceFolderBasename = basename(workspace);
  }
  return { vars, bareIsEnv: false };
}

/** Reads Cursor's `mcpServers`: `~/.cursor/mcp.json` and the project's `.cursor/mcp.json`, or only `ctx.file`. */
export async function scanCursor(ctx: ImportContext): Promise<SourceScan> {
  const scan = emptyScan();
  const files = ctx.file ? [ctx.file] : [join(ctx.home, ".cursor", "mcp.json"), join(ctx.cwd, ".cursor", "mcp.json")];
  const globalFile = join(ctx.home, ".cursor", "mcp.json");
  for (const file of [...new Set(files)]) {
    const doc = await readClientFile(file);
    if (doc === undefined) {
      scan.missing.push(file);
      continue;
    }
    scan.read.push(file);
    const inProject = file !== globalFile && basename(dirname(file)) === ".cursor";
    const servers = (doc as { mcpServers?: unknown } | null)?.mcpServers;
    if (servers === undefined) scan.warnings.push(`${file}: no "mcpServers" key`);
    convertServerMap(servers, file, rules(ctx.home, inProject ? dirname(dirname(file)) : undefined), scan);
  }
  if (scan.servers.length > 0) scan.warnings.push(toggleWarning("Cursor", "mcp.json"));
  return scan;
}
