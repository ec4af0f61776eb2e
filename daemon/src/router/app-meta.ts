/**
 * MCP Apps (the `io.modelcontextprotocol/ui` extension) as the router reads it: whether a client declared
 * the extension, a tool's `ui://` view (`_meta.ui.resourceUri`, or the older `_meta["ui/resourceUri"]`)
 * and its visibility (`_meta.ui.visibility`: `"model"`, `"app"`; both when absent), and the URIs of a
 * tool or a result rewritten into a view's form with every other `_meta` key (CSP, permissions, domain,
 * prefersBorder, ...) and `structuredContent` left exactly as the server gave them.
 */
import {
  isObject,
  uiExtensionOf,
  type ClientCapabilities,
  type JsonObject,
  type RequestCaller,
  type RequestId,
  type Tool,
} from "@mcpd/protocol";

/** The older, flat `_meta` key of a tool's view. */
const LEGACY_URI_KEY = "ui/resourceUri";

/** Whether a client's initialize capabilities declare the UI extension. */
export function declaresUi(capabilities: unknown): boolean {
  return uiExtensionOf(capabilities) !== undefined;
}

/**
 * Whether the client of request `id` on a connection declared the UI extension: in the request's own envelope
 * for a 2026-era request (each declares its capabilities), else in the connection's initialize.
 */
export function callerDeclaresUi(conn: CallerHost, id: RequestId): boolean {
  return declaresUi(callerCapabilities(conn, id));
}

/** A connection as {@link callerCapabilities} reads it. */
type CallerHost = {
  readonly clientCapabilities: ClientCapabilities;
  readonly modern: { callerOf(id: RequestId): RequestCaller | undefined } | undefined;
};

/** What the client of request `id` on a connection declared: its envelope's capabilities (2026 era), else the connection's initialize ones. */
export function callerCapabilities(conn: CallerHost, id: RequestId): ClientCapabilities {
  return (conn.modern?.callerOf(id)?.clientCapabilities as ClientCapabilities | undefined) ?? conn.clientCapabilities;
}

function uiMeta(tool: object): JsonObject | undefined {
  const meta = (tool as { _meta?: unknown })._meta;
  return isObject(meta) && isObject(meta.ui) ? (meta.ui as JsonObject) : undefined;
}

/** The `ui://` view a tool names, if any (`_meta.ui.resourceUri`, else `_meta["ui/resourceUri"]`). */
export function uiResourceUri(tool: object): string | undefined {
  const uri = uiMeta(tool)?.resourceUri;
  if (typeof uri === "string") return uri;
  const meta = (tool as { _meta?: unknown })._meta;
  return isObject(meta) && typeof meta[LEGACY_URI_KEY] === "string" ? (meta[LEGACY_URI_KEY] as string) : undefined;
}

/** Whether the tool is for its app alone (`visibility` without `"model"`): only UI clients see it. */
export function isAppOnly(tool: object): boolean {
  const v = uiMeta(tool)?.visibility;
  return Array.isArray(v) && !v.includes("model");
}

/** Whether the tool's app may call it (`visibility` absent, or naming `"app"`). */
export function isAppCallable(tool: object): boolean {
  const v = uiMeta(tool)?.visibility;
  return !Array.isArray(v) || v.includes("app");
}

/** The `ui://` URIs the tools name as their views. */
export function toolUiUris(tools: readonly Tool[]): string[] {
  const out: string[] = [];
  for (const t of tools) {
    if ((t as { _meta?: unknown })._meta === undefined) continue;
    const uri = uiResourceUri(t);
    if (uri?.startsWith("ui://")) out.push(uri);
  }
  return out;
}

/** A tool with the URIs of its view (both keys) in the form `form` gives; the same object when nothing changes. */
export function withToolUris<T extends object>(tool: T, form: (uri: string) => string): T {
  const meta = (tool as { _meta?: unknown })._meta;
  if (!isObject(meta)) return tool;
  let next: JsonObject = meta;
  const ui = uiMeta(tool);
  if (ui !== undefined && typeof ui.resourceUri === "string") {
    const uri = form(ui.resourceUri);
    if (uri !== ui.resourceUri) next = { ...next, ui: { ...ui, resourceUri: uri } };
  }
  const legacy = meta[LEGACY_URI_KEY];
  if (typeof legacy === "string" && form(legacy) !== legacy) next = { ...next, [LEGACY_URI_KEY]: form(legacy) };
  return next === meta ? tool : { ...tool, _meta: next };
}

/** One content block with its resource link's or embedded resource's URI in the form `form` gives. */
function withContentUri(block: unknown, form: (uri: string) => string): unknown {
  if (!isObject(block)) return block;
  if (block.type === "resource_link" && typeof block.uri === "string") {
    const uri = form(block.uri);
    return uri === block.uri ? block : { ...block, uri };
  }
  const res = block.resource;
  if (block.type === "resource" && isObject(res) && typeof res.uri === "string") {
    const uri = form(res.uri);
    return uri === res.uri ? block : { ...block, resource: { ...res, uri } };
  }
  return block;
}

/**
 * A tools/call or prompts/get answer with the URIs of its resource links and embedded resources in the
 * form `form` gives (a prompt's messages each hold one content block). The rest is kept as it is, and an
 * answer with nothing to change is the same object: it goes on as the server wrote it, never encoded again.
 */
export function withResultUris(result: JsonObject, form: (uri: string) => string): JsonObject {
  const content = result.content;
  const messages = result.messages;
  if (Array.isArray(content)) {
    const next = content.map((b) => withContentUri(b, form));
    return next.some((b, i) => b !== content[i]) ? { ...result, content: next } : result;
  }
  if (!Array.isArray(messages)) return result;
  const next = messages.map((m) => {
    if (!isObject(m)) return m;
    const c = withContentUri(m.content, form);
    return c === m.content ? m : { ...m, content: c };
  });
  return next.some((m, i) => m !== messages[i]) ? { ...result, messages: next } : result;
}
