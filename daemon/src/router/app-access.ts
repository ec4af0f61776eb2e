/**
 * What an app may reach past its connection's selection. A profile or tool globs that select an app's
 * tool (one naming a `ui://` view) select its app too, and the app calls its server's tools by their own
 * names: for a client that declared the UI extension, the app-only tools (`visibility: ["app"]`) of a
 * server whose app the view shows are listed, and every tool of that server its app may call
 * (`visibility` naming `"app"`, or absent) is callable. The server's own filters still hold, and nothing
 * of a server outside the view is reached.
 */
import { McpdError, WireCode, type JsonObject, type Tool } from "@mcpd/protocol";
import { declaresUi, isAppCallable, isAppOnly, uiResourceUri } from "./app-meta.js";
import { quoted } from "./close-matches.js";
import type { Upstream } from "./upstream-port.js";

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

/** The names of the app-only tools of one tools list, worked out once per list (a server's list is a new array when it changes). */
const APP_ONLY = new WeakMap<readonly Tool[], ReadonlySet<string>>();
function appOnlyNames(tools: readonly Tool[]): ReadonlySet<string> {
  let names = APP_ONLY.get(tools);
  if (names === undefined) APP_ONLY.set(tools, (names = new Set(tools.filter(isAppOnly).map((t) => t.name))));
  return names;
}

/**
 * The refusal of a `tools/call` of one of server `server`'s app-only tools (`app.tools`: its tools) by a client
 * that did not declare the UI extension (`app.ui`): such a tool is its app's alone (only a host that renders
 * the app calls it), and that client is not shown it either. In every view, by the server's own name; -32602
 * `MCPD_APP_ONLY_TOOL`. Undefined for any other request, a UI client, or a tool that is not app-only.
 */
export function appOnlyRefusal(
  server: string,
  method: string,
  params: JsonObject | undefined,
  app: { readonly ui: boolean; readonly tools: readonly Tool[] },
): McpdError | undefined {
  const name = params?.name;
  if (app.ui || method !== "tools/call" || typeof name !== "string" || !appOnlyNames(app.tools).has(name)) return undefined;
  return new McpdError(
    "MCPD_APP_ONLY_TOOL",
    `Tool ${quoted(name)} of server "${server}" is app-only (_meta.ui.visibility ["app"]): only an MCP App calls it, through a ` +
      'client that declared the UI extension ("io.modelcontextprotocol/ui" in capabilities.extensions)',
    { wireCode: WireCode.InvalidParams, data: { server, name } },
  );
}

/** A connection as {@link usedByUiClient} looks at it (a Session). */
interface Connection {
  readonly control: boolean;
  readonly initialized: boolean;
  readonly clientCapabilities: unknown;
  readonly privates: ReadonlySet<Upstream> | undefined;
  readonly modern: unknown;
  views(handle: Upstream): boolean;
}

/** Whether a connection holds server `shared`'s UI session (for a shared server, a session of its own of that server is that). */
function holdsUiSession(c: Connection, shared: Upstream): boolean {
  if (c.privates !== undefined) for (const h of c.privates) if (h.name === shared.name && h !== shared) return true;
  return false;
}

/**
 * Whether a UI client uses server `shared` (its shared session), which its UI session serves: a connection,
 * not a control one, that declared the UI extension in initialize and whose view shows the server (once
 * initialized), or that holds the server's UI session (a 2026-era connection whose requests declared the
 * extension in their envelopes: it uses the UI session until it closes).
 */
export function usedByUiClient(connections: Iterable<Connection>, shared: Upstream | undefined): boolean {
  if (shared === undefined) return false;
  for (const c of connections) {
    if (c.control) continue;
    if (c.initialized && declaresUi(c.clientCapabilities) && c.views(shared)) return true;
    if (holdsUiSession(c, shared)) return true;
  }
  return false;
}

/**
 * Whether a client without the UI extension uses server `shared`: a connection, not a control one, whose
 * view shows it and that did not declare the extension in initialize (once initialized), or a 2026-era one
 * (no initialize) whose requests have not declared it in their envelopes (it holds no UI session of it).
 */
export function usedWithoutUi(connections: Iterable<Connection>, shared: Upstream | undefined): boolean {
  if (shared === undefined) return false;
  for (const c of connections) {
    if (c.control || declaresUi(c.clientCapabilities) || !c.views(shared)) continue;
    if (c.initialized || (c.modern !== undefined && !holdsUiSession(c, shared))) return true;
  }
  return false;
}
