import { basename, dirname, join } from "node:path";
import { emptyScan, type ImportContext, type SourceScan } from "./import-types.js";
import { convertServerMap, type VariableRules } from "./normalize-entry.js";
import { readClientFile } from "./read-client-file.js";
import { toggleWarning } from "./tool-toggles.js";

/** VS Code's user settings directory: `~/Library/Application Support/Code/User` on macOS, `~/.config/Code/User` elsewhere. */
export function vscodeUserDir(home: string, platform: NodeJS.Platform): string {
  return platform === "darwin" ? join(home, "Library", "Application Support", "Code", "User") : join(home, ".config", "Code", "User");
}

/** VS Code's variables; environment variables are `${env:NAME}`, which mcpd also reads. */
function rules(home: string, workspace: string | undefined): VariableRules {
  const vars: Record<string, string> = { userHome: home, pathSeparator: "/", "/": "/" };
  if (workspace) {
    vars.workspaceFolder = workspace;
    vars.workspaceFolderBasename = basename(workspace);
  }
  return { vars, bareIsEnv: false };
}

/** The server map of a VS Code file: `servers` (mcp.json) or `mcp.servers` (settings.json, nested or dotted). */
function serverMap(doc: Record<string, unknown>): unknown {
  if (doc.servers !== undefined) return doc.servers;
  const mcp = doc.mcp as { servers?: unknown } | undefined;
  if (typeof mcp === "object" && mcp !== null && mcp.servers !== undefined) return mcp.servers;
  return doc["mcp.servers"];
}

function inputsOf(doc: Record<string, unknown>): unknown {
  return doc.inputs ?? (doc.mcp as { inputs?: unknown } | undefined)?.inputs ?? doc["mcp.inputs"];
}

/**
 * Reads VS Code's servers: the workspace's `.vscode/mcp.json` (in the current directory), the user's
 * `mcp.json` and the `mcp.servers` of the user's `settings.json`, or only `ctx.file`. `inputs` (values
 * VS Code prompts for) are not imported; a server that uses one is reported as unusable.
 */
export async function scanVscode(ctx: ImportContext): Promise<SourceScan> {
  const scan = emptyScan();
  const userDir = vscodeUserDir(ctx.home, ctx.platform);
  const files = ctx.file ? [ctx.file] : [join(ctx.cwd, ".vscode", "mcp.json"), join(userDir, "mcp.json"), join(userDir, "settings.json")];
  for (const file of files) {
    const doc = await readClientFile(file);
    if (doc === undefined) {
      scan.missing.push(file);
      continue;
    }
    scan.read.push(file);
    if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
      scan.warnings.push(`${file}: not a JSON object; nothing imported from it`);
      continue;
    }
    const d = doc as Record<string, unknown>;
    const inputs = inputsOf(d);
    if (Array.isArray(inputs) && inputs.length > 0) {
      scan.warnings.push(`${file}: "inputs" ignored (mcpd cannot prompt); servers that use \${input:...} are not imported`);
    }
    const workspace = basename(dirname(file)) === ".vscode" ? dirname(dirname(file)) : undefined;
    const isSettings = basename(file) === "settings.json";
    const map = serverMap(d);
    // A settings.json without MCP servers is normal; an mcp.json without `servers` is worth a word.
    if (map === undefined && !isSettings) scan.warnings.push(`${file}: no "servers" key`);
    convertServerMap(map, file, rules(ctx.home, workspace), scan);
  }
  if (scan.servers.length > 0) scan.warnings.push(toggleWarning("VS Code", "mcp.json or settings.json"));
  return scan;
}
