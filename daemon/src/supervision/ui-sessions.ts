/**
 * A shared server's second session, for the clients that declared the MCP Apps UI extension: a 2025-era
 * server is initialized once, and what it offers depends on what its client declared then (an app server
 * offers its UI tool only to a client with the extension). A 2026-era server (each request carries its
 * client's capabilities) gets none.
 *
 * Design: the shared session always declares mcpd's own capabilities (no extension), so everything that
 * reads it stays as it is: eager start, health checks, the tool cache, `mcpd status` and the aggregate
 * catalog's tools always hold what the server offers a client without the extension. The UI session declares
 * the same plus the UI extension and serves every UI client; at most one per shared server, made when a UI
 * client first uses the server, ended when no connection that declared the extension uses it any more.
 * While only UI clients use the server, the shared session is *parked*: once the UI session is ready and
 * nothing runs on the shared session, it is stopped (state `stopped`, reason {@link PARKED}), so one process
 * serves the server. Parked, it is an idle-stopped server: its cached tools stay in the catalog (what a
 * client without the extension would be offered), the UI session stands in for its prompts and resources
 * ({@link standIn}), and a client without the extension starts it again when it comes ({@link unpark}: it
 * initializes in the aggregate view; opening the server's view or a 2026-era request starts it on demand, as
 * any idle server). It is parked again when that client has gone (checked as connections close), and
 * started again (eager servers) when its UI session ends. So a second process runs only while both kinds
 * of client use the server. Switching the shared session's own kind instead would make the catalog, the
 * tool cache and status show what a UI client is offered to every client, and need the same second
 * session the other way round.
 */
import { UI_EXTENSION, isModernVersion, uiExtensionOf, type ClientCapabilities } from "@mcpd/protocol";
import type { ServerHandle } from "./server-handle.js";

/** Makes a handle of `shared`'s config that declares `capabilities` upstream. */
export type UiSessionMaker = (shared: ServerHandle, capabilities: ClientCapabilities) => ServerHandle;

/** Why a UI session ended with its last UI client. */
const UNUSED = "no client that declared the UI extension uses the server";
/** Why a shared session is stopped while its UI session serves every client of the server (the state reason of a parked one). */
export const PARKED = "parked: only clients that declared the UI extension use the server, its UI session serves them";

export class UiSessions {
  private readonly sessions = new Map<string, { ui: ServerHandle; shared: ServerHandle }>();
  /**
   * Whether a connection that declared the UI extension uses a server now (the router's answer, through its
   * adapter); unset (no router): a UI session ends only with its server's config.
   */
  used: ((server: string) => boolean) | undefined;
  /** Whether a connection that did not declare it uses a server now; unset (no router): a shared session is never parked. */
  usedWithout: ((server: string) => boolean) | undefined;

  constructor(
    private readonly base: ClientCapabilities,
    private readonly make: UiSessionMaker,
  ) {}

  /** The session a client declaring `capabilities` uses for `shared`: its UI session (made now if need be), or undefined for the shared one. */
  for(shared: ServerHandle, capabilities: ClientCapabilities): ServerHandle | undefined {
    const ui = uiExtensionOf(capabilities);
    if (ui === undefined || isModernVersion(shared.client?.initializeResult?.protocolVersion)) return undefined;
    let s = this.sessions.get(shared.name);
    if (s === undefined) {
      s = { ui: this.make(shared, { ...this.base, extensions: { [UI_EXTENSION]: ui } }), shared };
      this.sessions.set(shared.name, s);
      s.ui.on("state", (change: { state: string }) => {
        if (change.state === "ready") this.park(shared.name);
      });
    }
    return s.ui;
  }

  /** The UI session of server `name`, while it has one. */
  get(name: string): ServerHandle | undefined {
    return this.sessions.get(name)?.ui;
  }

  /** Every UI session. */
  get all(): ServerHandle[] {
    return [...this.sessions.values()].map((s) => s.ui);
  }

  /** The session that serves server `name`'s prompts and resources while its shared session is parked: its ready UI session. */
  standIn(name: string): ServerHandle | undefined {
    const s = this.sessions.get(name);
    return s !== undefined && parked(s.shared) && s.ui.state === "ready" ? s.ui : undefined;
  }

  /**
   * Ends a server's UI session (its server left the config or changed; no UI client uses it); the next UI
   * client makes a new one. Closed for good: a request still holding it never starts it again. `resume`: a
   * parked shared session of an eager server starts again (not for a server leaving the config).
   */
  async drop(name: string, reason: string, resume = true): Promise<void> {
    const s = this.sessions.get(name);
    this.sessions.delete(name);
    if (s === undefined) return;
    await s.ui.close(reason);
    const { enabled, startup } = s.shared.config;
    if (resume && parked(s.shared) && enabled && startup === "eager") await s.shared.start("its UI session ended");
  }

  /**
   * A connection closed: ends the UI sessions no connection that declared the UI extension uses any more,
   * and parks the shared sessions that only such connections use.
   */
  async release(): Promise<void> {
    const used = this.used;
    if (used === undefined || this.sessions.size === 0) return;
    const names = [...this.sessions.keys()];
    for (const name of names) if (used(name)) this.park(name);
    await Promise.all(names.filter((name) => !used(name)).map((name) => this.drop(name, UNUSED)));
  }

  /** A client without the extension has come to use server `name`: its parked shared session starts again (not awaited). */
  unpark(name: string): void {
    const s = this.sessions.get(name);
    if (s !== undefined && parked(s.shared)) void s.shared.start("a client without the UI extension uses the server");
  }

  /** Parks server `name`'s shared session when its UI session is ready, nothing runs on it, and no client without the extension uses the server. */
  private park(name: string): void {
    const s = this.sessions.get(name);
    if (s === undefined || s.ui.state !== "ready" || s.shared.state !== "ready" || s.shared.inFlight > 0) return;
    if (this.usedWithout?.(name) !== false) return;
    void s.shared.stop("stopped", PARKED);
  }
}

/** Whether a shared session is parked (stopped for its UI session, and not started since). */
function parked(shared: ServerHandle): boolean {
  return shared.state === "stopped" && shared.stateReason === PARKED;
}
