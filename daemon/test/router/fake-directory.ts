/**
 * The router's {@link ServerDirectory} over fake servers: the configured servers' shared fakes, and a
 * private fake per connection for a `sharing: "per-client"` server, as the manager makes them.
 */
import { NotFoundError, type ClientCapabilities } from "@mcpd/protocol";
import type { ResolvedServerConfig } from "../../src/config/config-schema.js";
import type { ServerDirectory, Upstream, UpstreamEvents } from "../../src/router/upstream-port.js";
import { FakeUpstream, type FakeServerSpec } from "./fake-upstream.js";

export class FakeDirectory implements ServerDirectory {
  private readonly shared = new Map<string, FakeUpstream>();
  /** `<server>\0<connection id>` -> that connection's private session. */
  private readonly privates = new Map<string, FakeUpstream>();
  private readonly specs = new Map<string, FakeServerSpec>();
  /** The router's callbacks, once it listens. */
  events: UpstreamEvents | undefined;

  get servers(): FakeUpstream[] {
    return [...this.shared.values()];
  }

  /** Every private session made so far and not released. */
  get privateSessions(): FakeUpstream[] {
    return [...this.privates.values()];
  }

  /** Adds a configured server (as a load or reload does), telling the router. */
  add(config: ResolvedServerConfig, spec: FakeServerSpec = {}): FakeUpstream {
    const fake = new FakeUpstream(config, spec);
    fake.events = this.events;
    this.shared.set(config.name, fake);
    this.specs.set(config.name, spec);
    this.events?.added(fake);
    return fake;
  }

  /** Removes a configured server (as a reload does): the router is told, then it stops. */
  remove(name: string): void {
    const fake = this.shared.get(name);
    if (!fake) return;
    this.shared.delete(name);
    this.events?.removed(fake);
    fake.setState("stopped", "removed from config");
  }

  get(name: string): FakeUpstream | undefined {
    return this.shared.get(name);
  }

  require(name: string): FakeUpstream {
    const fake = this.shared.get(name);
    if (fake) return fake;
    const known = [...this.shared.keys()];
    throw new NotFoundError("MCPD_UNKNOWN_SERVER", `Unknown server "${name}"; configured: ${known.length ? known.join(", ") : "(none)"}`);
  }

  async handleFor(name: string, connectionId: string, capabilities?: ClientCapabilities): Promise<FakeUpstream> {
    const shared = this.require(name);
    if (shared.config.sharing !== "per-client" || shared.state === "disabled") return shared;
    const key = `${name}\0${connectionId}`;
    let fake = this.privates.get(key);
    if (!fake) {
      fake = new FakeUpstream(shared.config, this.specs.get(name));
      fake.clientCapabilities = capabilities;
      fake.events = this.events;
      this.privates.set(key, fake);
    }
    return fake;
  }

  movePrivate(handle: Upstream, connectionId: string): void {
    for (const [key, fake] of this.privates) {
      if (fake !== handle) continue;
      this.privates.delete(key);
      this.privates.set(`${key.slice(0, key.indexOf("\0"))}\0${connectionId}`, fake);
      return;
    }
  }

  async stopPrivate(handle: Upstream, reason: string): Promise<void> {
    for (const [key, fake] of this.privates) {
      if (fake !== handle) continue;
      this.privates.delete(key);
      fake.crash(reason);
      fake.setState("stopped", reason);
      return;
    }
  }

  /** The private session of `name` that connection `connectionId` has, if any. */
  privateOf(name: string, connectionId: string): FakeUpstream | undefined {
    return this.privates.get(`${name}\0${connectionId}`);
  }

  async releaseConnection(connectionId: string, keep?: ReadonlySet<Upstream>): Promise<void> {
    for (const [key, fake] of this.privates) {
      if (!key.endsWith(`\0${connectionId}`) || keep?.has(fake)) continue;
      this.privates.delete(key);
      fake.crash("client disconnected");
      fake.setState("stopped", "client disconnected");
    }
  }

  listen(events: UpstreamEvents): void {
    this.events = events;
    for (const fake of [...this.shared.values(), ...this.privates.values()]) fake.events = events;
  }
}
