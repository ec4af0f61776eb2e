/**
 * The names and spellings the config file's schema and its readers share, without zod: importing them
 * (as `mcpd start` does for the log levels) loads no schema library.
 */

/** The daemon's log levels (pino's), in order of severity. */
export const LOG_LEVEL_VALUES = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** Server names: letters, digits, `_` and `-`, 1 to 48 characters (tool names get `<server>_` prefixes). */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,48}$/;

/** Profile names: like server names (they appear in paths such as `/profiles/<name>/mcp`). */
export const PROFILE_NAME_PATTERN = /^[A-Za-z0-9_-]{1,48}$/;

/** `type` spellings other tools use, mapped to mcpd's four. */
export const TRANSPORT_TYPE_ALIASES: Readonly<Record<string, "stdio" | "http" | "sse" | "ws">> = {
  stdio: "stdio",
  http: "http",
  sse: "sse",
  ws: "ws",
  // Claude Code and server-everything say "streamable-http"/"streamableHttp" for what MCP calls Streamable HTTP.
  "streamable-http": "http",
  streamableHttp: "http",
  streamable_http: "http",
  websocket: "ws",
};

/** The modes of tool search: list the tools, list `search_tools` instead, or that past a number of tools. */
export const TOOL_SEARCH_MODES = ["off", "on", "auto"] as const;
