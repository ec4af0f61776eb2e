import { join } from "node:path";
import { literalGlob } from "../config/globs.js";
import type { ImportContext, SourceScan } from "./import-types.js";
import { readClientFile } from "./read-client-file.js";

/** The prefix of an MCP tool in Claude Code's permission rules: `mcp__<server>` or `mcp__<server>__<tool>`. */
const MCP_RULE = /^mcp__([^_]+(?:_[^_]+)*?)(?:__(.+))?$/;

/**
 * Claude Code's settings files with permission rules, in the order it merges them: the user's, the
 * project's shared one, the project's local one. Not read when `--file` names one file.
 */
export function claudeCodeSettingsFiles(ctx: ImportContext): string[] {
  return [
    join(ctx.home, ".claude", "settings.json"),
    join(ctx.cwd, ".claude", "settings.json"),
    join(ctx.cwd, ".claude", "settings.local.json"),
  ];
}

/** A `deny` rule's tool part as an mcpd glob: Claude Code's `*` is a wildcard too; any other character is literal. */
function toolGlob(tool: string): string {
  return tool
    .split("*")
    .map((part) => literalGlob(part))
    .join("*");
}

/** The strings of `permissions.<key>` in a settings document. */
function rules(doc: unknown, key: "allow" | "deny"): string[] {
  const perms = (doc as { permissions?: Record<string, unknown> } | null)?.permissions;
  const list = perms && typeof perms === "object" ? perms[key] : undefined;
  return Array.isArray(list) ? list.filter((r): r is string => typeof r === "string") : [];
}

/**
 * Carries Claude Code's `permissions.deny` rules for MCP tools over to the servers found: a rule
 * `mcp__<server>__<tool>` (a `*` in the tool part is a wildcard) hides that tool from every mcpd client
 * (server-level `"tools": {"exclude": [...]}`), and `mcp__<server>` or `mcp__<server>__*` every tool
 * of it. Says what it could not carry over: rules naming a server not imported, and the `allow` rules
 * and `allowedTools` lists, which only approve calls without asking and hide nothing.
 */
export async function applyClaudeCodePermissions(ctx: ImportContext, scan: SourceScan, claudeJson: unknown): Promise<void> {
  const denied = new Map<string, { globs: string[]; files: Set<string> }>();
  let approvals = 0;
  const unknown = new Set<string>();
  for (const file of claudeCodeSettingsFiles(ctx)) {
    const doc = await readClientFile(file);
    if (doc === undefined) continue;
    scan.read.push(file);
    approvals += rules(doc, "allow").filter((r) => r.startsWith("mcp__")).length;
    for (const rule of rules(doc, "deny")) {
      const m = MCP_RULE.exec(rule);
      if (!m) continue;
      const server = m[1] as string;
      const tool = m[2];
      const entry = denied.get(server) ?? { globs: [], files: new Set<string>() };
      entry.globs.push(tool === undefined ? "*" : toolGlob(tool));
      entry.files.add(file);
      denied.set(server, entry);
    }
  }
  const projects = (claudeJson as { projects?: Record<string, { allowedTools?: unknown }> } | null)?.projects;
  for (const p of Object.values(projects && typeof projects === "object" ? projects : {})) {
    if (Array.isArray(p?.allowedTools)) approvals += p.allowedTools.filter((t) => typeof t === "string" && t.startsWith("mcp__")).length;
  }
  for (const [server, { globs, files }] of denied) {
    const targets = scan.servers.filter((s) => s.sourceName === server || s.name === server);
    if (targets.length === 0) {
      unknown.add(server);
      continue;
    }
    for (const t of targets) {
      const exclude = [...new Set([...(t.entry.tools?.exclude ?? []), ...globs])];
      t.entry.tools = { exclude };
      t.notes.push(
        `Claude Code's deny rules (${[...files].join(", ")}) became "tools": {"exclude": ${JSON.stringify(globs)}}: no mcpd client sees those tools`,
      );
    }
  }
  if (unknown.size > 0) {
    scan.warnings.push(
      `Claude Code denies tools of ${[...unknown].map((s) => `"${s}"`).join(", ")}, which no imported server is: not carried over`,
    );
  }
  if (approvals > 0) {
    scan.warnings.push(
      `Claude Code's ${approvals} approved MCP tool rule(s) (permissions.allow, allowedTools) are not carried over: they let calls run ` +
        'without asking and hide nothing; to show an agent only some tools, use a profile (mcpd.profiles) or a server\'s "tools" filter',
    );
  }
}
