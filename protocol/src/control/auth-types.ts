/** The shapes of the OAuth control methods (`mcpd/authStart`, `mcpd/authWait`, `mcpd/authLogout`). */
import type { ServerState } from "./control-types.js";

// ---- mcpd/authStart, mcpd/authWait, mcpd/authLogout ----

/** Result of `mcpd/authStart`: the authorization began in the daemon. */
export interface AuthStartResult {
  server: string;
  /** Where the user must go to authorize (open it in a browser); null when no user is needed (client credentials). */
  url: string | null;
  /** The scopes the authorization asks for (empty: none named, the server decides). */
  scopes: string[];
  /** Where the browser will be sent back (the daemon's loopback listener), or null. */
  redirectUri: string | null;
}

/** Result of `mcpd/authWait`: the authorization is done and the server was restarted with it. */
export interface AuthWaitResult {
  server: string;
  /** The scopes granted (as the authorization server said, else as asked). */
  scopes: string[];
  /** The server's state after its restart, and why. */
  state: ServerState;
  stateReason: string;
}

/** Result of `mcpd/authLogout`. */
export interface AuthLogoutResult {
  server: string;
  /** Whether there were tokens or a registration to forget. */
  forgotten: boolean;
  /** The server's state after its restart without them. */
  state: ServerState;
}
