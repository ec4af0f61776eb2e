import { join } from "node:path";
import { emptyScan, type ImportContext, type SourceScan } from "./import-types.js";
import { convertServerMap } from "./normalize-entry.js";
import { readClientFile } from "./read-client-file.js";

/** Claude Desktop's config file: `~/Library/Application Support/Claude/...` on macOS, `~/.config/Claude/...` elsewhere. */
export function claudeDesktopPath(home: string, platform: NodeJS.Platform): string {
  return platform === "darwin"
    ? join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
    : join(home, ".config", "Claude", "claude_desktop_config.json");
}

/** Reads Claude Desktop's `mcpServers`. Claude Desktop passes strings through, so `${VAR}` is kept for mcpd. */
export async function scanClaudeDesktop(ctx: ImportContext): Promise<SourceScan> {
  const scan = emptyScan();
  const file = ctx.file ?? claudeDesktopPath(ctx.home, ctx.platform);
  const doc = await readClientFile(file);
  if (doc === undefined) {
    scan.missing.push(file);
    return scan;
  }
  scan.read.push(file);
  const servers = (doc as { mcpServers?: unknown } | null)?.mcpServers;
  if (servers === undefined) scan.warnings.push(`${file}: no "mcpServers" key`);
  convertServerMap(servers, file, { vars: {}, bareIsEnv: true }, scan);
  return scan;
}
