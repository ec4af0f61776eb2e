import {
  LIST_METHODS,
  MCP_METHODS,
  ProtocolError,
  hasCapability,
  type JsonObject,
  type Logger,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type ServerCapabilities,
  type Tool,
} from "@mcpd/protocol";
import type { TransportRequestOptions } from "@mcpd/transports";
import type { ListKind } from "./list-refresher.js";

/** Largest number of pages followed for one listing: a server that loops its cursor cannot hang us. */
const MAX_PAGES = 1000;

/** How the lists are read: the client's own request (which refuses a method the server did not declare). */
export type ListRequest = <T>(method: string, params: JsonObject, options?: TransportRequestOptions) => Promise<T>;

/**
 * Follows `nextCursor` to the end and returns every item of a list method's `key`.
 * @throws ProtocolError past {@link MAX_PAGES} pages, and whatever `request` throws.
 */
export async function listAll<T>(
  request: ListRequest,
  method: string,
  key: string,
  params: JsonObject = {},
  options?: TransportRequestOptions,
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await request<JsonObject>(method, cursor === undefined ? params : { ...params, cursor }, options);
    const items = res[key];
    if (Array.isArray(items)) out.push(...(items as T[]));
    cursor = typeof res.nextCursor === "string" && res.nextCursor.length > 0 ? res.nextCursor : undefined;
    if (cursor === undefined) return out;
  }
  throw new ProtocolError(`${method} returned more than ${MAX_PAGES} pages`);
}

/** A whole list read with the method and key MCP_METHODS gives it. */
function readAll<T>(request: ListRequest, method: keyof typeof MCP_METHODS): Promise<T[]> {
  const key = (MCP_METHODS[method] as { list?: { key: string } }).list?.key as string;
  return listAll<T>(request, method, key);
}

/** One server's current tools, prompts, resources and resource templates, as last read. */
export class UpstreamLists {
  tools: Tool[] | undefined;
  prompts: Prompt[] | undefined;
  resources: Resource[] | undefined;
  templates: ResourceTemplate[] | undefined;
  /** Leaves tools out of the list as read (those a 2026 server's invalid `x-mcp-header` annotations invalidate). */
  screen: ((tools: Tool[]) => Tool[]) | undefined;

  constructor(
    private readonly request: ListRequest,
    private readonly log: Logger,
  ) {}

  /**
   * Reads one kind of list again, when the server's capabilities offer it. Resource templates are read
   * with the resources and are optional (servers without them answer -32601). @returns whether it was read.
   */
  async read(kind: ListKind, capabilities: ServerCapabilities): Promise<boolean> {
    const caps = capabilities as JsonObject;
    if (kind === "tools") {
      if (!hasCapability(LIST_METHODS.tool, "server", caps)) return false;
      const tools = await readAll<Tool>(this.request, LIST_METHODS.tool);
      this.tools = this.screen ? this.screen(tools) : tools;
    } else if (kind === "prompts") {
      if (!hasCapability(LIST_METHODS.prompt, "server", caps)) return false;
      this.prompts = await readAll<Prompt>(this.request, LIST_METHODS.prompt);
    } else {
      if (!hasCapability(LIST_METHODS.resource, "server", caps)) return false;
      this.resources = await readAll<Resource>(this.request, LIST_METHODS.resource);
      try {
        this.templates = await readAll<ResourceTemplate>(this.request, LIST_METHODS.resourceTemplate);
      } catch (err) {
        this.templates = [];
        this.log.debug({ err: (err as Error).message }, "resources/templates/list failed");
      }
    }
    return true;
  }
}
