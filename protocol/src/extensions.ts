/**
 * MCP extensions mcpd itself reads (`capabilities.extensions[<id>]`). Any other extension passes through
 * untouched where the route is exact, and is never claimed on a client's behalf where it is not.
 */
import { isObject } from "./guards.js";

/** MCP Apps (`@modelcontextprotocol/ext-apps`): interactive `ui://` views of tools. */
export const UI_EXTENSION = "io.modelcontextprotocol/ui";

/** What a client declared of the UI extension in its capabilities (`{ mimeTypes }`), if it did. */
export function uiExtensionOf(capabilities: unknown): Record<string, unknown> | undefined {
  const ext = isObject(capabilities) ? capabilities.extensions : undefined;
  const ui = isObject(ext) ? ext[UI_EXTENSION] : undefined;
  return isObject(ui) ? ui : undefined;
}
