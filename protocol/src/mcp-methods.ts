import type { JsonObject } from "./types.js";

/**
 * The two eras of MCP: `"2025"`, the revisions with the `initialize` handshake and sessions (2024-11-05 to
 * 2025-11-25); `"2026"`, the revisions from 2026-07-28 on, with no handshake, every request carrying its
 * version, capabilities and client info in `_meta`.
 */
export type Era = "2025" | "2026";

/** What an item of a list is named by, and so what a request targets: a tool, a prompt, a resource. */
export type ItemKind = "tool" | "prompt" | "resource" | "resourceTemplate";

/** Where a request names its target in `params`. */
export type TargetField = "name" | "uri" | "ref";

/** One MCP method or notification, as mcpd routes, gates and translates it. */
export interface McpMethodInfo {
  readonly kind: "request" | "notification";
  /** Who sends it: a client (to a server) or a server (to a client). */
  readonly from: "client" | "server";
  /** The eras whose wire carries it (a 2025 server-to-client request travels inside `input_required` in 2026: `inputRequest`). */
  readonly eras: readonly Era[];
  /**
   * The capability it needs: of the server (`server.tools`, `server.resources.subscribe`) for what clients
   * send, of the client (`client.sampling`) for what servers ask.
   */
  readonly capability?: string;
  /** What it targets, and where `params` names it: the item kind and the field (`ref`: a completion's `ref`). */
  readonly target?: { readonly kind: ItemKind | "completion"; readonly field: TargetField };
  /** A list method: the result's key holding the items, what they are, and whether it pages (`cursor`/`nextCursor`). */
  readonly list?: { readonly key: string; readonly item: ItemKind; readonly paginated: boolean };
  /** Whether the answer may come with progress and log notifications first (a stream over HTTP). */
  readonly streams?: boolean;
  /** 2026: whether the result may be `resultType: "input_required"` (multi round-trip). */
  readonly inputRequired?: boolean;
  /** 2026 over HTTP: the target (`params.name` or `params.uri`) is mirrored in the `Mcp-Name` header, which must match it. */
  readonly nameHeader?: boolean;
  /** 2026: whether the result carries `ttlMs` and `cacheScope`. */
  readonly cacheable?: boolean;
  /** 2026: a 2025 server-to-client request that travels as an input request inside `input_required`. */
  readonly inputRequest?: boolean;
  /** 2026: a notification a server sends only on a `subscriptions/listen` stream, and the filter field opting in. */
  readonly listenFilter?: string;
}

const BOTH: readonly Era[] = ["2025", "2026"];
const ONLY_2025: readonly Era[] = ["2025"];
const ONLY_2026: readonly Era[] = ["2026"];

/**
 * Every MCP method and notification mcpd knows, in one table: the aggregate view, the view gates, profiles,
 * the upstream capability checks and the faces ask it instead of keeping their own lists. A method not in
 * it is relayed as it is where the route is exact (one server's view) and refused in the aggregate view.
 */
export const MCP_METHODS = {
  initialize: { kind: "request", from: "client", eras: ONLY_2025 },
  "notifications/initialized": { kind: "notification", from: "client", eras: ONLY_2025 },
  ping: { kind: "request", from: "client", eras: ONLY_2025 },
  "server/discover": { kind: "request", from: "client", eras: ONLY_2026, cacheable: true },
  "tools/list": {
    kind: "request",
    from: "client",
    eras: BOTH,
    capability: "server.tools",
    list: { key: "tools", item: "tool", paginated: true },
    cacheable: true,
  },
  "tools/call": {
    kind: "request",
    from: "client",
    eras: BOTH,
    capability: "server.tools",
    target: { kind: "tool", field: "name" },
    streams: true,
    inputRequired: true,
    nameHeader: true,
  },
  "prompts/list": {
    kind: "request",
    from: "client",
    eras: BOTH,
    capability: "server.prompts",
    list: { key: "prompts", item: "prompt", paginated: true },
    cacheable: true,
  },
  "prompts/get": {
    kind: "request",
    from: "client",
    eras: BOTH,
    capability: "server.prompts",
    target: { kind: "prompt", field: "name" },
    streams: true,
    inputRequired: true,
    nameHeader: true,
  },
  "resources/list": {
    kind: "request",
    from: "client",
    eras: BOTH,
    capability: "server.resources",
    list: { key: "resources", item: "resource", paginated: true },
    cacheable: true,
  },
  "resources/templates/list": {
    kind: "request",
    from: "client",
    eras: BOTH,
    capability: "server.resources",
    list: { key: "resourceTemplates", item: "resourceTemplate", paginated: true },
    cacheable: true,
  },
  "resources/read": {
    kind: "request",
    from: "client",
    eras: BOTH,
    capability: "server.resources",
    target: { kind: "resource", field: "uri" },
    streams: true,
    inputRequired: true,
    nameHeader: true,
    cacheable: true,
  },
  "resources/subscribe": {
    kind: "request",
    from: "client",
    eras: ONLY_2025,
    capability: "server.resources.subscribe",
    target: { kind: "resource", field: "uri" },
  },
  "resources/unsubscribe": {
    kind: "request",
    from: "client",
    eras: ONLY_2025,
    capability: "server.resources.subscribe",
    target: { kind: "resource", field: "uri" },
  },
  "subscriptions/listen": { kind: "request", from: "client", eras: ONLY_2026, streams: true },
  "completion/complete": {
    kind: "request",
    from: "client",
    eras: BOTH,
    capability: "server.completions",
    target: { kind: "completion", field: "ref" },
  },
  "logging/setLevel": { kind: "request", from: "client", eras: ONLY_2025, capability: "server.logging" },
  "notifications/cancelled": { kind: "notification", from: "client", eras: BOTH },
  "notifications/progress": { kind: "notification", from: "server", eras: BOTH },
  "notifications/message": { kind: "notification", from: "server", eras: BOTH, capability: "server.logging" },
  "notifications/roots/list_changed": { kind: "notification", from: "client", eras: ONLY_2025, capability: "client.roots" },
  "notifications/tools/list_changed": { kind: "notification", from: "server", eras: BOTH, listenFilter: "toolsListChanged" },
  "notifications/prompts/list_changed": { kind: "notification", from: "server", eras: BOTH, listenFilter: "promptsListChanged" },
  "notifications/resources/list_changed": {
    kind: "notification",
    from: "server",
    eras: BOTH,
    listenFilter: "resourcesListChanged",
  },
  "notifications/resources/updated": {
    kind: "notification",
    from: "server",
    eras: BOTH,
    listenFilter: "resourceSubscriptions",
  },
  "notifications/subscriptions/acknowledged": { kind: "notification", from: "server", eras: ONLY_2026 },
  "notifications/elicitation/complete": { kind: "notification", from: "server", eras: ONLY_2025, capability: "client.elicitation" },
  "sampling/createMessage": { kind: "request", from: "server", eras: ONLY_2025, capability: "client.sampling", inputRequest: true },
  "elicitation/create": { kind: "request", from: "server", eras: ONLY_2025, capability: "client.elicitation", inputRequest: true },
  "roots/list": { kind: "request", from: "server", eras: ONLY_2025, capability: "client.roots", inputRequest: true },
} as const satisfies Record<string, McpMethodInfo>;

/** A method or notification of {@link MCP_METHODS}. */
export type McpMethodName = keyof typeof MCP_METHODS;

/** The row of `method`, or undefined for one mcpd does not know. */
export function mcpMethod(method: string): McpMethodInfo | undefined {
  return Object.hasOwn(MCP_METHODS, method) ? (MCP_METHODS as Record<string, McpMethodInfo>)[method] : undefined;
}

/** Whether `method` exists in `era`. */
export function inEra(method: string, era: Era): boolean {
  return mcpMethod(method)?.eras.includes(era) === true;
}

/** The list methods, by the kind of item they list. */
export const LIST_METHODS: Readonly<Record<ItemKind, McpMethodName>> = {
  tool: "tools/list",
  prompt: "prompts/list",
  resource: "resources/list",
  resourceTemplate: "resources/templates/list",
};

/**
 * What a request targets, from its `params` as the table says: `{ kind: "tool", name }` for `tools/call`,
 * `{ kind: "resource", name: uri }` for `resources/read`, a completion's `ref` as the prompt or resource
 * template it refers to. Undefined when the method targets nothing or `params` lacks the field.
 */
export function targetOf(method: string, params: JsonObject | undefined): { kind: ItemKind; name: string } | undefined {
  const target = mcpMethod(method)?.target;
  if (target === undefined || params === undefined) return undefined;
  if (target.field !== "ref") {
    const value = params[target.field];
    return typeof value === "string" && target.kind !== "completion" ? { kind: target.kind, name: value } : undefined;
  }
  const ref = params.ref;
  if (typeof ref !== "object" || ref === null || Array.isArray(ref)) return undefined;
  const r = ref as JsonObject;
  if (r.type === "ref/prompt" && typeof r.name === "string") return { kind: "prompt", name: r.name };
  if (r.type === "ref/resource" && typeof r.uri === "string") return { kind: "resourceTemplate", name: r.uri };
  return undefined;
}

/** Each method's capability split once (`server.resources.subscribe` -> server, [resources, subscribe]): asked per relayed call. */
const CAPABILITY_PATHS: ReadonlyMap<string, { side: string; path: readonly string[] }> = new Map(
  Object.entries(MCP_METHODS as Record<string, McpMethodInfo>)
    .filter(([, r]) => r.capability !== undefined)
    .map(([m, r]) => {
      const [side, ...path] = (r.capability as string).split(".");
      return [m, { side: side as string, path }];
    }),
);

/**
 * Whether `capabilities` (a server's or a client's, as declared) hold the capability path the table names
 * (`server.resources.subscribe` is `capabilities.resources.subscribe`, truthy). True when the method needs none.
 */
export function hasCapability(method: string, side: "server" | "client", capabilities: JsonObject | undefined): boolean {
  const needed = CAPABILITY_PATHS.get(method);
  if (needed === undefined || needed.side !== side) return true;
  let at: unknown = capabilities;
  for (const key of needed.path) {
    if (typeof at !== "object" || at === null) return false;
    at = (at as JsonObject)[key];
  }
  return at !== undefined && at !== null && at !== false;
}
