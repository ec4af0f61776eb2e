/**
 * What an app may reach past its connection's selection. A profile or tool globs that select an app's
 * tool (one naming a `ui://` view) select its app too, and the app calls its server's tools by their own
 * names: for a client that declared the UI extension, the app-only tools (`visibility: ["app"]`) of a
 * server whose app the view shows are listed, and every tool of that server its app may call
 * (`visibility` naming `"app"`, or absent) is callable. The server's own filters still hold, and nothing
 * of a server outside the view is reached.
 */
import type { Tool } from "@mcpd/protocol";
import { isAppCallable, isAppOnly, uiResourceUri } from "./app-meta.js";

/** Whether the view (`allows`: its say on a tool, by the server's own name) shows one of the tools' apps. */
export function viewShowsApp(tools: readonly Tool[], allows: (name: string) => boolean): boolean {
  return tools.some((t) => uiResourceUri(t) !== undefined && allows(t.name));
}

/** Whether a tool the view hides is listed all the same for a UI client: an app-only tool of an app the view shows. */
export function appListsTool(tool: Tool, tools: readonly Tool[], allows: (name: string) => boolean): boolean {
  return isAppOnly(tool) && viewShowsApp(tools, allows);
}

/** Whether the tool `name`, which the view hides, is callable all the same for a UI client: its app is in the view. */
export function appMayCall(name: string, tools: readonly Tool[], allows: (name: string) => boolean): boolean {
  const tool = tools.find((t) => t.name === name);
  return tool !== undefined && isAppCallable(tool) && viewShowsApp(tools, allows);
}
