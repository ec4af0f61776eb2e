/**
 * A shared server's second session, for the clients that declared the MCP Apps UI extension: a 2025-era
 * server is initialized once, and what it offers depends on what its client declared then (an app server
 * offers its UI tool only to a client with the extension). The shared session declares mcpd's own
 * capabilities (no extension); the UI session declares the same plus the UI extension, and serves every UI
 * client. At most one per shared server, made when a UI client first uses the server (the shared session
 * serves the others, and is what mcpd lists every client's aggregate view from), ended when the last
 * connection that declared the extension and uses the server has closed: it runs only while both kinds of
 * client use the server. A 2026-era server (each request carries its client's capabilities) gets none.
 */
import { UI_EXTENSION, isModernVersion, uiExtensionOf, type ClientCapabilities } from "@mcpd/protocol";
import type { ServerHandle } from "./server-handle.js";

/** Makes a handle of `shared`'s config that declares `capabilities` upstream. */
export type UiSessionMaker = (shared: ServerHandle, capabilities: ClientCapabilities) => ServerHandle;

/** Why a UI session ended with its last UI client. */
const UNUSED = "no client that declared the UI extension uses the server";

export class UiSessions {
  private readonly sessions = new Map<string, ServerHandle>();
  /**
   * Whether a connection that declared the UI extension uses a server now (the router's answer, through its
   * adapter); unset (no router): a UI session ends only with its server's config.
   */
  used: ((server: string) => boolean) | undefined;

  constructor(
    private readonly base: ClientCapabilities,
    private readonly make: UiSessionMaker,
  ) {}

  /** The session a client declaring `capabilities` uses for `shared`: its UI session (made now if need be), or undefined for the shared one. */
  for(shared: ServerHandle, capabilities: ClientCapabilities): ServerHandle | undefined {
    const ui = uiExtensionOf(capabilities);
    if (ui === undefined || isModernVersion(shared.client?.initializeResult?.protocolVersion)) return undefined;
    let h = this.sessions.get(shared.name);
    if (h === undefined) {
      h = this.make(shared, { ...this.base, extensions: { [UI_EXTENSION]: ui } });
      this.sessions.set(shared.name, h);
    }
    return h;
  }

  /** The UI session of server `name`, while it has one. */
  get(name: string): ServerHandle | undefined {
    return this.sessions.get(name);
  }

  /** Every UI session. */
  get all(): ServerHandle[] {
    return [...this.sessions.values()];
  }

  /**
   * Ends a server's UI session (its server left the config or changed; no UI client uses it); the next UI
   * client makes a new one. Closed for good: a request still holding it never starts it again.
   */
  drop(name: string, reason: string): Promise<void> {
    const h = this.sessions.get(name);
    this.sessions.delete(name);
    return h ? h.close(reason) : Promise.resolve();
  }

  /** A connection closed: ends the UI sessions no connection that declared the UI extension uses any more. */
  async release(): Promise<void> {
    const used = this.used;
    if (used === undefined || this.sessions.size === 0) return;
    await Promise.all([...this.sessions.keys()].filter((name) => !used(name)).map((name) => this.drop(name, UNUSED)));
  }
}
