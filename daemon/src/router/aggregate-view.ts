import {
  type McpdError,
  NotFoundError,
  WireCode,
  isObject,
  toWireError,
  type ClientCapabilities,
  type JsonObject,
  type JsonRpcErrorObject,
  type Prompt,
  type RequestId,
  type Tool,
} from "@mcpd/protocol";
import { appToolRoute, listedTools } from "./aggregate-tools.js";
import { callerDeclaresUi, declaresUi } from "./app-meta.js";
import type { Catalog, CatalogEntry } from "./catalog.js";
import { notFound, quoted } from "./close-matches.js";
import { aggregateInitializeResult, openEnvelopeSessions, openOwnSessions, unparkViewed } from "./aggregate-initialize.js";
import { hiddenInView } from "./aggregate-hidden.js";
import { OwnTools, ownSessions } from "./own-tools.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import type { ViewFilter } from "./view-filter.js";
import type { InputAsker } from "./ports.js";
import type { InFlightRequests } from "./in-flight.js";
import type { ServerDirectory, Upstream } from "./upstream-port.js";
import { resolveInView, viewResources, viewTemplates } from "./view-resources.js";
import { viewUriForm } from "./view-uris.js";
import { notString, renamed } from "./aggregate-params.js";

const TOOLS = { noun: "tool", method: "tools/list" };
const PROMPTS = { noun: "prompt", method: "prompts/list" };

/** What the aggregate view calls on its connection (its Session: no closures per connection); what its client declared decides its MCP Apps. */
export interface AggregateHost extends Pick<InputAsker, "clientCapabilities" | "modern"> {
  /** What the connection's selection hides (a profile, tool globs); undefined: nothing. */
  readonly filter: ViewFilter | undefined;
  /** Its own sessions (of per-client servers), if it has any. */
  readonly privates: ReadonlySet<Upstream> | undefined;
  /** The session it uses for a server (its own for a per-client server, made on first use); `capabilities`: what the request's client declared. */
  resolveHandle(server: string, capabilities?: ClientCapabilities): Promise<Upstream>;
  /** Its requests in flight: one that waits for servers to come up is registered there (`wait`) meanwhile. */
  readonly inFlight: Pick<InFlightRequests, "after">;
  send(message: object): void;
  replyError(id: RequestId | null, error: JsonRpcErrorObject): void;
  /**
   * Serves the request on one server, as that server's own view would; `clientUri` is the namespaced
   * resource URI the client wrote, which the answer gives back. `checked`: the view's filter has passed it.
   */
  serveOnServer(id: RequestId, server: string, method: string, params: JsonObject | undefined, clientUri?: string, checked?: boolean): void;
  /** Answers `logging/setLevel` for the connection. */
  setLevel(id: RequestId, params: JsonObject | undefined): void;
}

/** What the aggregate view shares with every connection's: the servers and the catalog. */
export interface AggregateShared {
  /** `servers.servers`: the shared session of every configured server, in configuration order. */
  readonly servers: Pick<ServerDirectory, "servers" | "unpark">;
  readonly catalog: Catalog;
}

/**
 * The aggregate view: every enabled server behind one MCP server. Tools and prompts are exposed as
 * `<server>__<name>` and routed through the catalog's lookup tables; resources keep their URIs unless
 * several servers list the same one, which is then addressed per server as `mcpd://<server>/<uri>`.
 * A connection's {@link ViewFilter} narrows all of it: listings leave out what it hides, and a name it
 * hides is refused (-32075 `MCPD_HIDDEN`) with a Set or Map lookup, so a call without one costs nothing more.
 */
export class AggregateView {
  private readonly own = new OwnTools();

  constructor(
    private readonly host: AggregateHost,
    private readonly shared: AggregateShared,
  ) {}

  /** The tools this connection sees (`ui`: as a client that declared the UI extension). */
  private tools(f: ViewFilter | undefined, ui: boolean): readonly CatalogEntry<Tool>[] {
    const all = this.allTools(ui);
    return f === undefined ? all : f.narrow(all, (e) => f.allowsTool(e.server, e.exposed));
  }

  /** The tools/list answer: app-only tools for UI clients alone, views in the view's form (aggregate-tools.ts). */
  private listTools(id: RequestId, f: ViewFilter | undefined): Tool[] {
    const ui = callerDeclaresUi(this.host, id);
    return listedTools(this.allTools(ui), this.tools(f, ui), f, ui, viewUriForm(this.shared.catalog, f));
  }

  /** The prompts this connection sees. */
  private prompts(f: ViewFilter | undefined): readonly CatalogEntry<Prompt>[] {
    const all = this.shared.catalog.prompts();
    return f === undefined ? all : f.narrow(all, (e) => f.allowsPrompt(e.server, e.exposed));
  }

  /** The refusal of a name hidden by its server's own filter or the connection's (aggregate-hidden.ts). */
  private hidden(
    kind: "tool" | "prompt",
    name: string,
    entry: CatalogEntry<unknown> | undefined,
    f: ViewFilter | undefined,
  ): McpdError | undefined {
    return hiddenInView(this.shared.catalog, this.shared.servers.servers, kind, name, entry, f);
  }

  /** The tools this connection's view starts from: the catalog's, its own sessions' in place of their servers' (own-tools.ts). */
  private allTools(ui: boolean): readonly CatalogEntry<Tool>[] {
    return this.own.tools(this.shared.catalog.tools(), ownSessions(this.host.privates, ui));
  }

  /** mcpd's own initialize answer (aggregate-initialize.ts). */
  initializeResult(protocolVersion: string): JsonObject {
    // A UI client's own sessions of per-client servers start now: their tools, not the shared session's, are what it lists.
    if (declaresUi(this.host.clientCapabilities)) void openOwnSessions(this.host, this.shared.servers.servers);
    else if (this.host.modern === undefined) unparkViewed(this.host, this.shared.servers);
    return aggregateInitializeResult(this.shared.servers.servers, protocolVersion);
  }

  /**
   * Waits (bounded) for servers whose tools are not known yet: starting for the first time without a
   * cached list, or lazy and never started. With `all`, also for every server that is starting or
   * restarting (a name that is not found may belong to one of them). Servers that do not come up in
   * time are left out; a list_changed follows when they do. With `found`, it returns as soon as that
   * holds after any server came up: a server stuck in a restart loop must not hold up a name that
   * another server has just brought.
   */
  private async settle(all: boolean, found?: () => boolean): Promise<void> {
    const waits: Promise<unknown>[] = [];
    for (const h of [...this.shared.servers.servers, ...(this.host.privates ?? [])]) {
      const unknown = !h.cachedTools && (h.state === "starting" || (h.state === "stopped" && h.config.startup === "lazy"));
      const pending = all && (h.state === "starting" || h.state === "restarting");
      if (unknown || pending) waits.push(h.whenReady(Math.min(h.config.timeout, RUNTIME_DEFAULTS.aggregateSettleMs)).catch(() => {}));
    }
    if (waits.length === 0) return;
    await new Promise<void>((resolve) => {
      let left = waits.length;
      for (const w of waits) {
        void w.then(() => {
          this.shared.catalog.invalidate();
          if (--left === 0 || found?.() === true) resolve();
        });
      }
    });
  }

  /**
   * The configured server an exposed name `<server>__<name>` that the catalog does not have belongs to,
   * when that server is not ready: its state, not the name, is what the client must hear (-32060 with the
   * reason, the exit code and the next retry; -32076 for needs-auth). The longest configured name that
   * prefixes it (server names are `[A-Za-z0-9_-]{1,48}`, so the sanitizing of exposedName never alters
   * the prefix). One that is `disabled`, `failed`, `needs-auth` or between attempts after a failed start
   * is named at once; one that may still bring the name (starting, restarting after a crash) only once
   * the lookup has waited for the servers coming up (`settled`).
   */
  private unavailableOwner(exposed: string, settled: boolean): Upstream | undefined {
    let owner: Upstream | undefined;
    for (const h of this.shared.servers.servers) {
      if (exposed.startsWith(`${h.name}__`) && (!owner || h.name.length > owner.name.length)) owner = h;
    }
    // A stopped server (idle, or lazy and waited for above) is started by a call: its cached tools are in
    // the catalog, so a name not there is unknown, and nothing is started for a typo.
    if (owner === undefined || owner.state === "ready" || owner.state === "stopped") return undefined;
    return owner.failsAtOnce || settled || !this.unsettled ? owner : undefined;
  }

  private get unsettled(): boolean {
    return this.shared.servers.servers.some(
      (h) => h.state === "starting" || h.state === "restarting" || (h.state === "stopped" && h.config.startup === "lazy"),
    );
  }

  /** Answers `err`; a name or URI not found while servers come up is looked up again once they are, or a server in view has it. */
  private fail(id: RequestId, method: string, params: JsonObject | undefined, retried: boolean, err: unknown): void {
    if (!retried && err instanceof NotFoundError && this.unsettled) {
      this.host.inFlight.after(
        id,
        this.settle(true, () => this.shared.catalog.resolves(method, params, (sv) => this.host.filter?.viewsServer(sv) !== false)),
        () => this.serve(id, method, params, true),
        (e) => this.host.replyError(id, toWireError(e)),
      );
      return;
    }
    this.host.replyError(id, toWireError(err));
  }

  /** Serves one request; a name or URI not found while servers are still coming up is looked up again once they are. */
  serve(id: RequestId, method: string, params: JsonObject | undefined, retried = false): void {
    const s = this.host;
    const catalog = this.shared.catalog;
    switch (method) {
      case "tools/list": {
        s.inFlight.after(
          id,
          openEnvelopeSessions(s, id, this.shared.servers.servers).then(() => this.settle(false)),
          () => s.send({ jsonrpc: "2.0", id, result: { tools: this.listTools(id, s.filter) } }),
          (err) => this.fail(id, method, params, retried, err),
        );
        return;
      }
      case "prompts/list":
        s.send({ jsonrpc: "2.0", id, result: { prompts: this.prompts(s.filter).map((e) => ({ ...e.item, name: e.exposed })) } });
        return;
      case "resources/list":
        s.send({ jsonrpc: "2.0", id, result: { resources: viewResources(catalog, s.filter).map((e) => e.item) } });
        return;
      case "resources/templates/list":
        s.send({ jsonrpc: "2.0", id, result: { resourceTemplates: viewTemplates(catalog, s.filter).map((e) => e.item) } });
        return;
      case "tools/call":
      case "prompts/get": {
        const name = params?.name;
        if (typeof name !== "string") return s.replyError(id, notString(method, "name"));
        return this.serveNamed(id, method, params, method === "tools/call" ? "tool" : "prompt", name, undefined, retried);
      }
      case "resources/read":
      case "resources/subscribe":
      case "resources/unsubscribe": {
        const uri = params?.uri;
        if (typeof uri !== "string") return s.replyError(id, notString(method, "uri"));
        return this.serveUri(id, method, params, uri, undefined, retried);
      }
      case "completion/complete": {
        const ref = params?.ref;
        if (isObject(ref) && ref.type === "ref/prompt" && typeof ref.name === "string")
          return this.serveNamed(id, method, params, "prompt", ref.name, ref, retried);
        if (isObject(ref) && ref.type === "ref/resource" && typeof ref.uri === "string")
          return this.serveUri(id, method, params, ref.uri, ref, retried);
        s.replyError(id, { code: WireCode.InvalidParams, message: 'completion/complete: "ref" must be a ref/prompt or ref/resource' });
        return;
      }
      case "logging/setLevel":
        s.setLevel(id, params);
        return;
      default:
        s.replyError(id, { code: WireCode.MethodNotFound, message: `Method not found: ${method}` });
    }
  }

  /**
   * A tool or prompt by its exposed name (`ref`: the prompt ref of a completion, which holds the name): to
   * its server under the server's own name, unless the view or the server's filter hides it. A name the
   * catalog lacks goes to its server when that server is not ready (a tool of a server that is not ready is
   * not unknown: its server refuses it, -32060 or -32076, with the reason); otherwise it is unknown.
   */
  private serveNamed(
    id: RequestId,
    method: string,
    params: JsonObject | undefined,
    kind: "tool" | "prompt",
    name: string,
    ref: JsonObject | undefined,
    retried: boolean,
  ): void {
    const s = this.host;
    const catalog = this.shared.catalog;
    const ui = callerDeclaresUi(s, id);
    const entry =
      kind === "tool" ? (this.own.tool(catalog.tools(), ownSessions(s.privates, ui), name) ?? catalog.tool(name)) : catalog.prompt(name);
    const f = s.filter;
    // An app's own call: its server's unprefixed name, or a tool the selection picking the app leaves out.
    const app =
      kind === "tool" && (f !== undefined || !entry)
        ? appToolRoute(this.allTools(ui), f, ui, name, entry as CatalogEntry<Tool>)
        : undefined;
    if (app !== undefined && "refuse" in app) return s.replyError(id, toWireError(app.refuse));
    if (app !== undefined) return s.serveOnServer(id, app.entry.server, method, renamed(params, app.entry.item.name, ref), undefined, true);
    if (f !== undefined || !entry) {
      const refusal = this.hidden(kind, name, entry, f);
      if (refusal) return s.replyError(id, toWireError(refusal));
    }
    if (entry) return s.serveOnServer(id, entry.server, method, renamed(params, entry.item.name, ref), undefined, true);
    const owner = this.unavailableOwner(name, retried);
    if (owner) return s.serveOnServer(id, owner.name, method, renamed(params, name.slice(owner.name.length + 2), ref));
    const known = (kind === "tool" ? this.tools(f, ui) : this.prompts(f)).map((e) => e.exposed);
    const code = kind === "tool" ? "MCPD_UNKNOWN_TOOL" : "MCPD_UNKNOWN_PROMPT";
    this.fail(
      id,
      method,
      params,
      retried,
      notFound(code, `Unknown ${kind} ${quoted(name)}`, name, known, kind === "tool" ? TOOLS : PROMPTS),
    );
  }

  /** A resource URI (`ref`: the resource ref of a completion, a URI or URI template): to the one server of the view that offers it. */
  private serveUri(
    id: RequestId,
    method: string,
    params: JsonObject | undefined,
    uri: string,
    ref: JsonObject | undefined,
    retried: boolean,
  ): void {
    const s = this.host;
    const target = resolveInView(this.shared.catalog, this.shared.servers.servers, s.filter, uri, ref !== undefined);
    if (target.kind === "unknown") return this.fail(id, method, params, retried, target.error);
    if (target.kind === "refused") return s.replyError(id, toWireError(target.error));
    if (ref !== undefined) return s.serveOnServer(id, target.server, method, { ...params, ref: { ...ref, uri: target.uri } });
    // The server gets its own URI; the answer (and later updates) use the form the client wrote.
    s.serveOnServer(id, target.server, method, { ...params, uri: target.uri }, target.namespaced ? uri : undefined);
  }
}
