/**
 * The shapes of mcpd's control protocol (the `mcpd/*` methods of docs/protocol.md): declared here once
 * for the daemon that answers them, the client SDK that asks and the `mcpd` command that prints them.
 * Each object type has its {@link Fields} beside it, checked against it by the compiler. This file holds
 * the shared words (states, params), the handshake's select, the listings, the operations and the
 * notification; `mcpd/status` has `status-types.ts`, the OAuth methods `auth-types.ts`, the HTTP front's
 * tokens `http-token-types.ts`.
 */
import type { Prompt, Resource, ResourceTemplate, Tool } from "../types.js";
import type { Fields } from "./fields.js";

/** A server's lifecycle states, in the order a start goes through them first. */
export const SERVER_STATES = ["stopped", "starting", "ready", "restarting", "needs-auth", "failed", "disabled"] as const;

/** A server's lifecycle state in the daemon (docs/supervision.md). */
export type ServerState = (typeof SERVER_STATES)[number];

/** How a server is reached, as configured (`type` of its config entry; `stdio` when it has a command). */
export type ServerTransportType = "stdio" | "http" | "sse" | "ws";

/** The wire mode of a running transport: `legacy-sse` is MCP 2024-11-05's HTTP+SSE (also after a fallback). */
export type TransportMode = "stdio" | "streamable-http" | "legacy-sse" | "websocket";

/** Params of a method that takes none. Anything sent is ignored. */
export type NoParams = Record<string, never>;

/** Params of a method that may be narrowed to one server. */
export interface ServerFilter {
  /** A configured server's name; every server when left out. */
  server?: string;
}

/** Params of a method about one server. */
export interface ServerParams {
  /** A configured server's name (-32602 listing the configured ones when unknown). */
  server: string;
}

// ---- mcpd/select ----

/**
 * Which part of the view a connection sees: a profile of the config (`mcpd.profiles.<name>`) and/or a
 * one-off list of tool globs over the aggregate view's names (`*` any run of characters, `?` one, `\`
 * escapes the next). Both: what both allow. Neither: everything.
 */
export interface ViewSelection {
  /** A profile's name (-32602 `MCPD_UNKNOWN_PROFILE`, listing the configured ones, when there is none). */
  profile?: string;
  /** Tool globs, such as `["github__*", "*__search"]`: only the tools one of them matches. */
  tools?: string[];
  /**
   * Tool search's mode for this connection's aggregate view (`on`, `off`, `auto`), in place of its
   * profile's `toolSearch`: in search mode, tools/list holds `search_tools` and the tools found.
   */
  toolSearch?: "on" | "off" | "auto";
}

/** Params of `mcpd/select`, the first message of a connection, before `initialize`. */
export interface SelectParams extends ViewSelection {
  /** A server's name: its transparent view. Left out: the aggregate view. */
  server?: string;
  /** Also receive `notifications/mcpd/serverState`. */
  events?: boolean;
  /** `true`: a control connection. Only in a connection's first message (else -32071 `MCPD_FORBIDDEN`). */
  control?: boolean;
}

/** Result of `mcpd/select`. */
export interface SelectResult extends ViewSelection {
  view: "aggregate" | "server";
  /** The server of a transparent view. */
  server?: string;
  /** Present (true) on a control connection. */
  control?: true;
  /**
   * The MCP revisions the daemon serves on its socket, newest era first. Left out by daemons of releases
   * before MCP 2026-07-28: a client then answers 2026-era requests itself (see daemon-eras.ts).
   */
  protocolVersions?: string[];
}

export const SELECT_RESULT_FIELDS: Fields<SelectResult> = {
  view: "required",
  server: "optional",
  control: "optional",
  protocolVersions: "optional",
  profile: "optional",
  tools: "optional",
  toolSearch: "optional",
};

/** Params of `mcpd/tools`: one server's tools, or what a profile or tool globs select (the asking connection's own selection when neither is given). */
export interface ToolsParams extends ServerFilter, ViewSelection {}

// ---- mcpd/servers ----

/** One entry of `mcpd/servers`. */
export interface ServerSummary {
  name: string;
  state: ServerState;
  enabled: boolean;
  transport: ServerTransportType;
  /** The running transport's wire mode; null while the server has no session. */
  mode: TransportMode | null;
  /** Number of tools the server exposes (the cached list while it starts). */
  tools: number;
}

export const SERVER_SUMMARY_FIELDS: Fields<ServerSummary> = {
  name: "required",
  state: "required",
  enabled: "required",
  transport: "required",
  mode: "required",
  tools: "required",
};

/** Result of `mcpd/servers`: the configured servers. */
export interface ServersResult {
  servers: ServerSummary[];
}

// ---- listings ----

/** A tool with the server it belongs to. `name` is the server's own (unprefixed) name. */
export interface ToolInfo extends Tool {
  server: string;
  /** The aggregate view's name for it (`<server>__<name>`, sanitized); set by `mcpd/tools`. */
  exposedName?: string;
}

/** A prompt with the server it belongs to. `name` is the server's own (unprefixed) name. */
export interface PromptInfo extends Prompt {
  server: string;
  /** The aggregate view's name for it; set by `mcpd/prompts`. */
  exposedName?: string;
}

/** A resource with the server it belongs to. */
export interface ResourceInfo extends Resource {
  server: string;
}

/** A resource template with the server it belongs to. */
export interface ResourceTemplateInfo extends ResourceTemplate {
  server: string;
}

/** Result of `mcpd/tools`. */
export interface ToolsResult {
  tools: ToolInfo[];
  /**
   * Without `server`: the view's tool-search mode (docs/tool-search.md): whether agents with this selection
   * get `search_tools` (and `call_tool`) in place of `tools`, and why (`off (the default)`, `on (profile "x")`,
   * `auto (...): 140 tools > 100, search mode on`).
   */
  toolSearch?: { on: boolean; callTool: boolean; reason: string };
}

/** Result of `mcpd/prompts`. */
export interface PromptsResult {
  prompts: PromptInfo[];
}

/** Result of `mcpd/resources`. */
export interface ResourcesResult {
  resources: ResourceInfo[];
  templates: ResourceTemplateInfo[];
}

// ---- operations ----

/** Result of `mcpd/restart`: the servers restarted (a disabled one is not). */
export interface RestartResult {
  restarted: string[];
}

/** Result of `mcpd/enable` and `mcpd/disable`: the server's state afterwards. */
export interface ServerStateResult {
  server: string;
  state: ServerState;
}

/** What a config reload did: server names per outcome. */
export interface ReloadDiff {
  added: string[];
  removed: string[];
  changed: string[];
  unchanged: string[];
}

/** Result of `mcpd/reload`: server names per outcome, and the new file's warnings. */
export interface ReloadResult extends ReloadDiff {
  warnings: string[];
}

/** Params of `mcpd/logs`. */
export interface LogsParams {
  /** A server's stderr; left out: the daemon's own log. */
  server?: string;
  /** How many of the most recent lines (default 100, at most 10000). */
  lines?: number;
}

/** Result of `mcpd/logs`. */
export interface LogsResult {
  /** The server asked about, when one was. */
  server?: string;
  lines: string[];
}

/** Result of `mcpd/shutdown`, sent before the graceful shutdown begins. */
export interface ShutdownResult {
  ok: true;
}

// ---- notifications ----

/** Params of `notifications/mcpd/serverState`, sent on connections that selected `events: true`. */
export interface ServerStateParams {
  server: string;
  state: ServerState;
  previous: ServerState;
  /** Why it changed (secrets masked). */
  reason: string;
}
