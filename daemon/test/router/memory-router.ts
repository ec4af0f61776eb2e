/**
 * The router in memory: the real {@link Router} (sessions, views, catalog, progress, subscriptions,
 * server-to-client requests) over fake servers ({@link FakeUpstream}) and in-memory clients
 * ({@link MemoryClient}). No socket, no process, no transport: a test runs in milliseconds.
 *
 *   const r = memoryRouter({ servers: { a: { tools: ["echo"] }, b: { tools: ["echo"] } } });
 *   const c = await r.connect();
 *   const answer = await c.call("a__echo", { text: "hi" });
 *   ...
 *   await r.close();
 */
import type { JsonObject } from "@mcpd/protocol";
import { parseConfig } from "../../src/config/index.js";
import { Router } from "../../src/router/router.js";
import { FakeDirectory } from "./fake-directory.js";
import type { FakeServerSpec, FakeUpstream } from "./fake-upstream.js";
import { MemoryClient, type RequestAnswer, type Message } from "./memory-client.js";

/** One server: what it offers, and its config entry as `mcpServers` holds it (`command` defaults to `fake`). */
export type MemoryServer = FakeServerSpec & { config?: JsonObject };

export interface MemoryRouterSpec {
  servers: Record<string, MemoryServer>;
  /** The config's `mcpd` settings (`profiles`, ...). */
  mcpd?: JsonObject;
  /** Default 1024. */
  maxInFlightPerConnection?: number;
}

/** How a client opens its connection. */
export interface ConnectOptions {
  /** `mcpd/select` params, sent first (a server's view, a profile, tool globs, events). */
  select?: JsonObject;
  /** The capabilities it declares in `initialize`. */
  capabilities?: JsonObject;
  /** Its clientInfo name. */
  name?: string;
  /** Answers its server-to-client requests. */
  onRequest?: (request: Message) => RequestAnswer;
}

/** The config text of a spec: every server an stdio entry unless its config says otherwise. */
export function configText(spec: Pick<MemoryRouterSpec, "servers" | "mcpd">): string {
  const mcpServers = Object.fromEntries(Object.entries(spec.servers).map(([name, s]) => [name, { command: "fake", ...s.config }]));
  return JSON.stringify({ mcpServers, ...(spec.mcpd ? { mcpd: spec.mcpd } : {}) });
}

export class MemoryRouter {
  readonly directory = new FakeDirectory();
  readonly router: Router;
  readonly clients: MemoryClient[] = [];

  constructor(spec: MemoryRouterSpec) {
    const config = parseConfig(configText(spec), "/memory/config.json", {});
    this.router = new Router(this.directory, {
      maxInFlightPerConnection: spec.maxInFlightPerConnection ?? 1024,
      clientRequestTimeoutMs: 10_000,
      control: async () => ({}),
    });
    for (const server of config.servers) this.directory.add(server, spec.servers[server.name]);
    this.router.applyFilters(config.settings, this.router.filtersSnapshot());
  }

  /** A configured server's shared fake. */
  upstream(name: string): FakeUpstream {
    return this.directory.require(name);
  }

  /** A new connection: `mcpd/select` when asked, then `initialize` (answered before it resolves). */
  async connect(options: ConnectOptions = {}): Promise<MemoryClient> {
    const client = this.attach();
    client.onRequest = options.onRequest;
    if (options.select) {
      const selected = await client.request("mcpd/select", options.select, "select");
      if (selected.error) throw new Error(`mcpd/select failed: ${JSON.stringify(selected.error)}`);
    }
    const init = await client.request(
      "initialize",
      {
        protocolVersion: "2025-11-25",
        capabilities: options.capabilities ?? {},
        clientInfo: { name: options.name ?? "memory", version: "1" },
      },
      "init",
    );
    if (init.error) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);
    client.notify("notifications/initialized");
    return client;
  }

  /** A connection that has said nothing yet. */
  attach(): MemoryClient {
    const client = new MemoryClient(this.router);
    this.clients.push(client);
    return client;
  }

  /** Calls not settled yet, over every fake (shared and private). */
  pendingCalls(): number {
    let n = 0;
    for (const f of [...this.directory.servers, ...this.directory.privateSessions]) n += f.pending.size;
    return n;
  }

  /** Every connection ends; afterwards no table of the router holds an entry, and no call is pending. */
  async close(): Promise<void> {
    for (const c of this.clients) await c.disconnect();
    const t = this.router.tables();
    const left = { ...t, sessions: this.router.sessions.size, pendingCalls: this.pendingCalls() };
    if (t.progress + t.subscriptions + t.relayed + t.inFlight + left.sessions + left.pendingCalls > 0)
      throw new Error(`the router kept state after every client left: ${JSON.stringify(left)}`);
  }
}

/** A router over fake servers (see {@link MemoryRouter}). */
export function memoryRouter(spec: MemoryRouterSpec): MemoryRouter {
  return new MemoryRouter(spec);
}
