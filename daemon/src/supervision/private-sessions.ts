import type { ServerHandle } from "./server-handle.js";

/**
 * The private sessions of per-client servers: one per server and connection, keyed `<server>\0<connectionId>`
 * (one moved to a connection that has its own already, see {@link move}: `<server>\0moved-<n>\0<connectionId>`).
 */
export class PrivateSessions {
  private readonly byKey = new Map<string, ServerHandle>();
  private movedCount = 0;

  /** Every private session. */
  get all(): ServerHandle[] {
    return [...this.byKey.values()];
  }

  /**
   * Connection `connectionId`'s session of server `name`, made by `make` when it has none. No await between
   * the lookup and the set: two requests of one connection share one private session.
   */
  for(name: string, connectionId: string, make: () => ServerHandle): ServerHandle {
    const key = `${name}\0${connectionId}`;
    let h = this.byKey.get(key);
    if (!h) this.byKey.set(key, (h = make()));
    return h;
  }

  /** Private sessions of one server, for status. */
  of(name: string): ServerHandle[] {
    return [...this.byKey.entries()].filter(([k]) => k.startsWith(`${name}\0`)).map(([, h]) => h);
  }

  /** Removes the sessions of connection `connectionId` but those `keep` has, and returns them (the caller's to stop). */
  takeConnection(connectionId: string, keep?: { has(handle: ServerHandle): boolean }): ServerHandle[] {
    return this.takeWhere((key, h) => key.endsWith(`\0${connectionId}`) && keep?.has(h) !== true);
  }

  /** Removes the sessions of server `name` and returns them (the caller's to stop). */
  takeServer(name: string): ServerHandle[] {
    return this.takeWhere((key) => key.startsWith(`${name}\0`));
  }

  /** Removes session `handle` and returns it, if it is one. */
  take(handle: object): ServerHandle | undefined {
    return this.takeWhere((_, h) => h === handle)[0];
  }

  /** Session `handle` becomes connection `connectionId`'s: it ends when that connection closes. */
  move(handle: object, connectionId: string): void {
    for (const [key, h] of this.byKey) {
      if (h !== handle) continue;
      const name = key.slice(0, key.indexOf("\0"));
      this.byKey.delete(key);
      const natural = `${name}\0${connectionId}`;
      this.byKey.set(this.byKey.has(natural) ? `${name}\0moved-${++this.movedCount}\0${connectionId}` : natural, h);
      return;
    }
  }

  clear(): void {
    this.byKey.clear();
  }

  private takeWhere(test: (key: string, handle: ServerHandle) => boolean): ServerHandle[] {
    const taken: ServerHandle[] = [];
    for (const [key, h] of this.byKey) {
      if (!test(key, h)) continue;
      this.byKey.delete(key);
      taken.push(h);
    }
    return taken;
  }
}
