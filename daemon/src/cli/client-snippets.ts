/**
 * Ready-to-paste client configurations for mcpd's HTTP front end (`mcpd http`): one MCP server entry
 * reached over Streamable HTTP with a bearer token, in the formats Claude Code, Cursor and VS Code read.
 */

/** A remote server entry as Cursor's `mcp.json` takes it (`mcpServers.<name>`): the URL and the headers. */
export interface CursorEntry {
  url: string;
  headers: Record<string, string>;
}

/** A remote server entry as VS Code's `mcp.json` takes it (`servers.<name>`): `type` is required there. */
export interface VscodeEntry {
  type: "http";
  url: string;
  headers: Record<string, string>;
}

/** The three snippets `mcpd http` prints. */
export interface ClientSnippets {
  /** A shell command line: `claude mcp add --transport http <name> <url> --header "Authorization: Bearer <token>"`. */
  claudeCode: string;
  /** The document to merge into `~/.cursor/mcp.json` (or a project's `.cursor/mcp.json`). */
  cursor: { mcpServers: Record<string, CursorEntry> };
  /** The document to merge into `.vscode/mcp.json` or the user's `mcp.json`. */
  vscode: { servers: Record<string, VscodeEntry> };
}

/** Characters that need no quoting in a POSIX shell word. */
const SHELL_PLAIN = /^[A-Za-z0-9_\-.,:/@%+=]+$/;
/** Characters that keep their literal meaning inside double quotes (no `$`, backquote, `\`, `"` or `!`). */
const SHELL_DOUBLE_SAFE = /^[^$`\\"!]*$/;

/** One shell word: as is when plain, in double quotes when that is literal, else in single quotes. */
export function shellWord(text: string): string {
  if (SHELL_PLAIN.test(text)) return text;
  if (SHELL_DOUBLE_SAFE.test(text)) return `"${text}"`;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The snippets for one endpoint.
 * @param name the entry's name in the client (`mcpd`, or the server's name for one server's view)
 * @param url the Streamable HTTP endpoint (`http://127.0.0.1:7767/mcp`)
 * @param token the bearer token, or a placeholder such as `<token>`
 */
export function clientSnippets(name: string, url: string, token: string): ClientSnippets {
  const authorization = `Bearer ${token}`;
  const headers = { Authorization: authorization };
  return {
    // Claude Code's own help writes the header option after the URL: `... <name> <url> --header "K: V"`.
    claudeCode: [
      "claude mcp add --transport http",
      shellWord(name),
      shellWord(url),
      "--header",
      shellWord(`Authorization: ${authorization}`),
    ].join(" "),
    cursor: { mcpServers: { [name]: { url, headers: { ...headers } } } },
    vscode: { servers: { [name]: { type: "http", url, headers: { ...headers } } } },
  };
}
