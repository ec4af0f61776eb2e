/**
 * The tools a client lets its user switch off one by one: where a client keeps those choices outside
 * the file import reads, import cannot carry them over and says so.
 */

/**
 * The warning for a client that keeps its per-tool toggles in its own settings store (Cursor, VS Code)
 * rather than in `file`: those choices are not imported; how to hide a tool in mcpd instead. A
 * `disabledTools` list in the file itself, where one is written, is carried over (normalize-entry.ts).
 */
export function toggleWarning(client: string, file: string): string {
  return (
    `${client} keeps the tools you switch off in its own settings store, not in ${file}: those choices are not imported; ` +
    `to hide a tool from every mcpd client add "tools": {"exclude": ["<tool>"]} to its server, or give agents a profile (mcpd.profiles)`
  );
}
