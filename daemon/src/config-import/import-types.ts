/**
 * Shared types of the config importers (`mcpd config import --from ...`).
 */

/** The clients whose MCP server lists `mcpd config import` reads. */
export const IMPORT_SOURCES = ["claude-desktop", "claude-code", "cursor", "vscode"] as const;
export type ImportSource = (typeof IMPORT_SOURCES)[number];

/**
 * The clients that start their stdio servers with their own whole environment, by display name: a server
 * imported from them may rely on a variable the user exported without listing it in its `env`, which
 * mcpd's default (`envMode: "allowlist"`) does not pass. Claude Desktop, like the MCP SDK and mcpd,
 * passes only a minimal environment plus `env`, so its servers need nothing more.
 */
export const WHOLE_ENVIRONMENT_SOURCES: Readonly<Partial<Record<ImportSource, string>>> = {
  "claude-code": "Claude Code",
  cursor: "Cursor",
  vscode: "VS Code",
};

/**
 * One server in mcpd's config format (the `mcpServers` entry format Claude Desktop, Claude Code and
 * Cursor share; docs/configuration.md). Only the keys that say how to reach the server, plus `enabled`.
 */
export interface ServerEntry {
  type?: "stdio" | "http" | "sse" | "ws";
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  enabled?: boolean;
  /** A server-level tools filter: the tools the source client had switched off for this server. */
  tools?: { exclude: string[] };
}

/** A server found in a client's config, converted to mcpd's format. */
export interface FoundServer {
  /** The name mcpd will use (the client's name, made valid when it had to be). */
  name: string;
  /** The client's own name for it (what its per-tool settings, such as Claude Code's rules, use). */
  sourceName: string;
  entry: ServerEntry;
  /** Where it was found: `<file>` or `<file> (project /path)`. */
  origin: string;
  /** Notes about the conversion: dropped keys, a renamed server, substituted variables. */
  notes: string[];
}

/** A server that could not be converted, and why. */
export interface UnusableServer {
  name: string;
  origin: string;
  reason: string;
}

/** What one importer read. */
export interface SourceScan {
  /** Files that existed and were read. */
  read: string[];
  /** Default locations that did not exist (not an error). */
  missing: string[];
  servers: FoundServer[];
  unusable: UnusableServer[];
  /** Things the user should know about a file as a whole (e.g. VS Code `inputs` ignored). */
  warnings: string[];
}

/** Where the importers look: the user's home, the project directory and the platform. */
export interface ImportContext {
  home: string;
  cwd: string;
  platform: NodeJS.Platform;
  /** `--file PATH`: read only this file instead of the default locations. */
  file?: string;
}

/** Creates an empty scan. */
export function emptyScan(): SourceScan {
  return { read: [], missing: [], servers: [], unusable: [], warnings: [] };
}
