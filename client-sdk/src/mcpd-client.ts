import {
  McpdDisable,
  McpdEnable,
  McpdLogs,
  McpdPrompts,
  McpdReload,
  McpdResources,
  McpdRestart,
  McpdServers,
  McpdShutdown,
  McpdStatus,
  McpdTools,
  type CallToolResult,
  type JsonObject,
  type LogsParams,
} from "@mcpd/protocol/core";
import { McpdClientCore } from "./mcpd-client-core.js";
import type { CallOptions, McpdClientOptions } from "./mcpd-client-options.js";
import type {
  PromptInfo,
  ReloadResult,
  ResourceInfo,
  ResourceTemplateInfo,
  ServerStateResult,
  ServerSummary,
  StatusResult,
  ToolInfo,
} from "./types.js";

const MAX_PAGES = 1_000;

/**
 * A client of the mcpd daemon: one socket connection carrying one MCP session (aggregate view, or one
 * server's view), plus mcpd's control methods. Reaches any server with per-request routing
 * (`_meta["mcpd/server"]`), reconnects when the daemon restarts, and emits the events of
 * {@link McpdClientEvents}.
 *
 * Errors are {@link McpdError}s; match on `code`: `MCPD_REQUEST_TIMEOUT`, `MCPD_ABORTED`,
 * `MCPD_SERVER_UNAVAILABLE`, `MCPD_UNKNOWN_TOOL`, `MCPD_DAEMON_UNAVAILABLE`, `MCPD_CONNECTION_LOST`,
 * `MCPD_QUEUE_FULL`; an upstream server's own JSON-RPC error is `MCPD_MCP_ERROR` (its code in `wireCode`,
 * its `data` in `data`). Create with {@link connect}, or `new McpdClient(options)` then {@link McpdClient.connect}.
 */
export class McpdClient extends McpdClientCore {
  /** The configured servers with their state and transport (`mcpd/servers`). */
  async servers(options?: CallOptions): Promise<ServerSummary[]> {
    return (await this.control(McpdServers, undefined, options)).servers;
  }

  /**
   * Tools with their server. With `server` (or in a server view): that server's tools, unprefixed, from
   * its `tools/list` (every page). Without: every server's tools (`mcpd/tools`), each with `exposedName`.
   * Either way only those this connection's `profile` and `tools` selection let through.
   */
  async listTools(filter: { server?: string } = {}, options?: CallOptions): Promise<ToolInfo[]> {
    const server = filter.server ?? this.viewServer;
    if (server === undefined) return (await this.control(McpdTools, undefined, options)).tools;
    const tools = await this.listAll<ToolInfo>(server, "tools/list", "tools", options);
    return tools.map((t) => ({ ...t, server }));
  }

  /**
   * Calls a tool. With `server`, `name` is the server's own tool name; without (aggregate view), the
   * exposed name (`<server>__<name>`). A tool that reports failure resolves with `isError: true`.
   * A name the server does not list: with `server`, the server's own answer; without, `MCPD_UNKNOWN_TOOL`.
   * @throws `MCPD_UNKNOWN_TOOL`, `MCPD_SERVER_UNAVAILABLE`, `MCPD_REQUEST_TIMEOUT`, `MCPD_ABORTED`,
   * `MCPD_CONNECTION_LOST`, `MCPD_DAEMON_UNAVAILABLE`, or the server's error (`MCPD_MCP_ERROR`).
   */
  callTool(
    call: { server?: string; name: string; arguments?: JsonObject; _meta?: JsonObject },
    options?: CallOptions,
  ): Promise<CallToolResult> {
    const params: JsonObject = { name: call.name, arguments: call.arguments ?? {} };
    if (call._meta) params._meta = call._meta;
    return this.request<CallToolResult>(call.server, "tools/call", params, options);
  }

  /** Prompts with their server; like {@link listTools} (`prompts/list` per server, or `mcpd/prompts`). */
  async listPrompts(filter: { server?: string } = {}, options?: CallOptions): Promise<PromptInfo[]> {
    const server = filter.server ?? this.viewServer;
    if (server === undefined) return (await this.control(McpdPrompts, undefined, options)).prompts;
    const prompts = await this.listAll<PromptInfo>(server, "prompts/list", "prompts", options);
    return prompts.map((p) => ({ ...p, server }));
  }

  /** Gets a prompt (`prompts/get`); `name` as in {@link callTool}. */
  getPrompt(get: { server?: string; name: string; arguments?: Record<string, string> }, options?: CallOptions): Promise<JsonObject> {
    const params: JsonObject = { name: get.name };
    if (get.arguments) params.arguments = get.arguments;
    return this.request(get.server, "prompts/get", params, options);
  }

  /** Resources with their server (`resources/list` per server, every page, or `mcpd/resources`). */
  async listResources(filter: { server?: string } = {}, options?: CallOptions): Promise<ResourceInfo[]> {
    const server = filter.server ?? this.viewServer;
    if (server === undefined) return (await this.control(McpdResources, undefined, options)).resources;
    const resources = await this.listAll<ResourceInfo>(server, "resources/list", "resources", options);
    return resources.map((r) => ({ ...r, server }));
  }

  /** Resource templates with their server (`resources/templates/list` per server, or `mcpd/resources`). */
  async listResourceTemplates(filter: { server?: string } = {}, options?: CallOptions): Promise<ResourceTemplateInfo[]> {
    const server = filter.server ?? this.viewServer;
    if (server === undefined) return (await this.control(McpdResources, undefined, options)).templates;
    const templates = await this.listAll<ResourceTemplateInfo>(server, "resources/templates/list", "resourceTemplates", options);
    return templates.map((t) => ({ ...t, server }));
  }

  /** Reads a resource (`resources/read`). Without `server`, the daemon routes by URI. */
  readResource(read: { server?: string; uri: string }, options?: CallOptions): Promise<JsonObject> {
    return this.request(read.server, "resources/read", { uri: read.uri }, options);
  }

  /**
   * The daemon's status: its process, every server, every client (`mcpd/status`). Without `control: true`
   * it is reduced (`restricted: true`, a {@link RestrictedDaemonStatus}): this connection alone among the
   * clients, no paths, no stderr or last error.
   */
  status(options?: CallOptions): Promise<StatusResult> {
    return this.control(McpdStatus, undefined, options);
  }

  /**
   * Restarts one server, or all when `server` is omitted. Resolves with the names restarted. Needs
   * `control: true` (else `MCPD_FORBIDDEN`).
   */
  async restart(server?: string, options?: CallOptions): Promise<string[]> {
    const result = await this.control(McpdRestart, server === undefined ? {} : { server }, options);
    return result.restarted;
  }

  /**
   * Re-reads the config file (`mcpd/reload`). Needs `control: true`.
   * @throws the daemon's error naming the problem when the file is invalid; `MCPD_FORBIDDEN` without control.
   */
  reload(options?: CallOptions): Promise<ReloadResult> {
    return this.control(McpdReload, undefined, options);
  }

  /** Enables a server (starting it per its startup mode). Needs `control: true` (else `MCPD_FORBIDDEN`). */
  enable(server: string, options?: CallOptions): Promise<ServerStateResult> {
    return this.control(McpdEnable, { server }, options);
  }

  /** Disables a server (stopping it); calls to it then fail with `MCPD_SERVER_UNAVAILABLE`. Needs `control: true`. */
  disable(server: string, options?: CallOptions): Promise<ServerStateResult> {
    return this.control(McpdDisable, { server }, options);
  }

  /** A server's stderr tail, or the daemon's recent log lines when `server` is omitted. Needs `control: true`. */
  async logs(query: { server?: string; lines?: number } = {}, options?: CallOptions): Promise<string[]> {
    const params: LogsParams = {};
    if (query.server !== undefined) params.server = query.server;
    if (query.lines !== undefined) params.lines = query.lines;
    return (await this.control(McpdLogs, params, options)).lines;
  }

  /**
   * Asks the daemon to shut down gracefully (needs `control: true`). The connection then drops: the client
   * reconnects as usual (to a daemon started again), so call {@link close} when done.
   */
  async shutdown(options?: CallOptions): Promise<void> {
    await this.control(McpdShutdown, undefined, options);
  }

  /** Fetches every page of a list method, guarding against a server that repeats its cursor. */
  private async listAll<T>(server: string, method: string, key: string, options?: CallOptions): Promise<T[]> {
    const items: T[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await this.request<JsonObject>(server, method, cursor === undefined ? {} : { cursor }, options);
      const list = result[key];
      if (Array.isArray(list)) items.push(...(list as T[]));
      const next = result.nextCursor;
      if (typeof next !== "string" || next === "" || seen.has(next)) break;
      seen.add(next);
      cursor = next;
    }
    return items;
  }
}

/**
 * Creates an {@link McpdClient}, connects it (starting the daemon when `autostart` says so) and performs
 * the handshake. The returned client is ready for calls.
 *
 * @example
 * const client = await connect({ clientInfo: { name: "my-agent", version: "1.0.0" } });
 * const tools = await client.listTools();
 * @throws `MCPD_DAEMON_UNAVAILABLE` when no daemon answers (with a hint to run `mcpd start`),
 * `MCPD_UNTRUSTED_SOCKET` when another user could have made the socket (see {@link McpdClient.connect}).
 */
export function connect(options: McpdClientOptions = {}): Promise<McpdClient> {
  return new McpdClient(options).connect();
}
