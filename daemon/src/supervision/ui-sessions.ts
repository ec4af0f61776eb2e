/**
 * A shared server's second session, for the clients that declared the MCP Apps UI extension: a 2025-era
 * server is initialized once, and what it offers depends on what its client declared then (an app server
 * offers its UI tool only to a client with the extension). The shared session declares mcpd's own
 * capabilities (no extension); the UI session declares the same plus the UI extension, and serves every UI
 * client. At most one per shared server, made when a UI client first uses the server (the shared session
 * serves the others); a 2026-era server (each request carries its client's capabilities) gets none.
 */
import { UI_EXTENSION, isModernVersion, uiExtensionOf, type ClientCapabilities } from "@mcpd/protocol";
import type { ServerHandle } from "./server-handle.js";

/** Makes a handle of `shared`'s config that declares `capabilities` upstream. */
export type UiSessionMaker = (shared: ServerHandle, capabilities: ClientCapabilities) => ServerHandle;

export class UiSessions {
  private readonly sessions = new Map<string, ServerHandle>();

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

  /** Ends a server's UI session (its server left the config or changed); the next UI client makes a new one. */
  drop(name: string, reason: string): Promise<void> {
    const h = this.sessions.get(name);
    this.sessions.delete(name);
    return h ? h.stop("stopped", reason) : Promise.resolve();
  }
}
