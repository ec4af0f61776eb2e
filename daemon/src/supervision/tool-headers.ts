import {
  McpRemoteError,
  WireCode,
  isObject,
  paramHeadersOf,
  type JsonObject,
  type Logger,
  type RequestReply,
  type Tool,
} from "@mcpd/protocol";
import { paramHeaderValue, type TransportRequestOptions } from "@mcpd/transports";

/**
 * The `x-mcp-header` side of a 2026-era server over Streamable HTTP (docs/protocol.md, "Eras upstream"):
 * a `tools/call` carries an `Mcp-Param-<name>` header for each argument the tool's `inputSchema` annotates,
 * and a tool whose annotations are invalid is dropped (left out of `tools/list`, its calls refused without
 * reaching the server), as the 2026 era requires of a client; each is logged once and shown in status.
 */
export class ToolHeaders {
  /** Tools dropped for invalid annotations -> why. */
  private readonly invalid = new Map<string, string>();

  /** @param active whether the rules apply now (the session is a 2026-era one over Streamable HTTP) */
  constructor(
    private readonly log: Logger,
    private readonly active: () => boolean,
  ) {}

  /** `options` with the `Mcp-Param-*` headers of a `tools/call` (of a tool in `tools`), when the rules apply. */
  options<O extends TransportRequestOptions>(
    method: string,
    params: JsonObject | undefined,
    options: O | undefined,
    tools: readonly Tool[],
  ): O | undefined {
    if (method !== "tools/call" || !this.active()) return options;
    const headers = this.headers(tools, params?.name, params?.arguments);
    return headers === undefined ? options : ({ ...options, headers } as O);
  }

  /** A `tools/list` answer on its way: without the dropped tools, when the rules apply. */
  result<T>(method: string, answer: Promise<T>): Promise<T> {
    return method === "tools/list" && this.active() ? answer.then((r) => this.list(r as JsonObject) as T) : answer;
  }

  /** {@link result} for a reply. */
  reply(method: string, given: RequestReply): RequestReply {
    if (method !== "tools/list" || !this.active()) return given;
    return { resolve: (r) => given.resolve(this.list(r as JsonObject)), reject: (e) => given.reject(e) };
  }

  /** The tools dropped, each with why (for `mcpd status`). */
  get dropped(): ReadonlyMap<string, string> {
    return this.invalid;
  }

  /** A `tools/list` result without the tools whose annotations are invalid; the same object when none is. */
  private list(result: JsonObject): JsonObject {
    if (!isObject(result) || !Array.isArray(result.tools)) return result;
    const kept = result.tools.filter((tool) => {
      if (!isObject(tool) || typeof tool.name !== "string") return true;
      const found = paramHeadersOf(tool.inputSchema);
      if (!("invalid" in found)) return true;
      if (this.invalid.get(tool.name) !== found.invalid)
        this.log.warn({ tool: tool.name, why: found.invalid }, "tool dropped: invalid x-mcp-header annotation");
      this.invalid.set(tool.name, found.invalid);
      return false;
    });
    return kept.length === result.tools.length ? result : { ...result, tools: kept };
  }

  /** Why a `tools/call` of `name` is refused (the tool was dropped); undefined: it may go. */
  refusal(name: unknown): McpRemoteError | undefined {
    const why = typeof name === "string" ? this.invalid.get(name) : undefined;
    if (why === undefined) return undefined;
    return new McpRemoteError({
      code: WireCode.InvalidParams,
      message: `Tool "${String(name)}" is not available: its x-mcp-header annotation is invalid (${why})`,
    });
  }

  /** The `Mcp-Param-*` headers of a `tools/call` of `name` with `args`, from the tool in `tools`; undefined: none. */
  private headers(tools: readonly Tool[], name: unknown, args: unknown): Record<string, string> | undefined {
    const tool = typeof name === "string" ? tools.find((t) => t.name === name) : undefined;
    const found = tool === undefined ? undefined : paramHeadersOf(tool.inputSchema);
    if (found === undefined || "invalid" in found || found.headers.length === 0) return undefined;
    const out: Record<string, string> = {};
    for (const { property, header } of found.headers) {
      const value = paramHeaderValue(isObject(args) ? args[property] : undefined);
      if (value !== undefined) out[`mcp-param-${header.toLowerCase()}`] = value;
    }
    return out;
  }
}
