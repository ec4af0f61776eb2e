import {
  McpRemoteError,
  WireCode,
  headerParams,
  isObject,
  paramHeaderValues,
  type HeaderParam,
  type JsonObject,
  type Logger,
  type Tool,
} from "@mcpd/protocol";

/** A tool left out of a server's list, and why. */
export interface RejectedTool {
  name: string;
  reason: string;
}

/**
 * The `x-mcp-header` annotations of a 2026 server's tools over Streamable HTTP (MCP 2026-07-28, "Custom
 * Headers from Tool Parameters"): a client must mirror each annotated argument into an `Mcp-Param-{Name}`
 * header, and must leave out of `tools/list` a tool whose annotations break the rules (logged as a
 * warning with the tool's name and the reason, and shown in `mcpd status`); a call of such a tool is
 * refused without reaching the server.
 */
export class ToolHeaders {
  /** The annotated parameters of each valid tool that has some. */
  private readonly params = new Map<string, readonly HeaderParam[]>();
  private rejectedNow: RejectedTool[] = [];

  constructor(private readonly log: Logger) {}

  /** The tools left out of the last listing, and why. */
  get rejected(): readonly RejectedTool[] {
    return this.rejectedNow;
  }

  /** `tools` without those whose annotations are invalid; remembers the others' annotated parameters. */
  screen(tools: readonly Tool[]): Tool[] {
    const before = new Map(this.rejectedNow.map((r) => [r.name, r.reason]));
    const kept: Tool[] = [];
    const rejected: RejectedTool[] = [];
    this.params.clear();
    for (const tool of tools) {
      const read = headerParams(tool.inputSchema);
      if ("invalid" in read) {
        rejected.push({ name: tool.name, reason: read.invalid });
        if (before.get(tool.name) !== read.invalid)
          this.log.warn({ tool: tool.name, reason: read.invalid }, "tool left out: its x-mcp-header annotation is invalid");
        continue;
      }
      if (read.params.length > 0) this.params.set(tool.name, read.params);
      kept.push(tool);
    }
    this.rejectedNow = rejected;
    return kept;
  }

  /** The `Mcp-Param-*` headers of a request: a tools/call's annotated arguments; none for anything else. */
  headersFor(method: string, params: JsonObject | undefined): Record<string, string> | undefined {
    if (method !== "tools/call" || typeof params?.name !== "string") return undefined;
    const annotated = this.params.get(params.name);
    return annotated === undefined ? undefined : paramHeaderValues(annotated, isObject(params.arguments) ? params.arguments : {});
  }

  /** Why a `tools/call` of `name` is refused: the last listing left the tool out. Undefined: it may go. */
  refusal(name: unknown): McpRemoteError | undefined {
    const rejected = typeof name === "string" ? this.rejectedNow.find((r) => r.name === name) : undefined;
    if (rejected === undefined) return undefined;
    return new McpRemoteError({
      code: WireCode.InvalidParams,
      message: `Tool "${rejected.name}" is not available: its x-mcp-header annotation is invalid (${rejected.reason})`,
    });
  }
}
