import type { DashboardLoginResult, DaemonInfo, HttpFrontStatus, ReloadDiff } from "@mcpd/protocol";
import type { AuthFlows } from "../auth/auth-flows.js";
import type { Router } from "../router/router.js";
import type { Session } from "../router/session.js";
import type { MCPManager } from "../supervision/manager.js";
import type { HttpTokenAdmin } from "./http-token-control.js";

/** What the control methods need from the running daemon. */
export interface DaemonControl {
  manager: MCPManager;
  router: Router;
  info: () => DaemonInfo;
  /** The HTTP front end's state, when the daemon has one. */
  http?: () => HttpFrontStatus;
  /** The HTTP front end's scoped tokens, when the daemon has one. */
  httpTokens?: HttpTokenAdmin;
  /** A one-time login link into the dashboard, when the daemon has an HTTP front end. */
  dashboardLogin?: () => DashboardLoginResult;
  reload: () => Promise<ReloadDiff & { warnings: readonly string[] }>;
  shutdown: () => void;
  logTail: (lines: number) => string[];
  /** The `mcpd auth` flows (and the servers' OAuth providers). */
  auth: AuthFlows;
}

/** What each control handler is given besides its params: the daemon, and the session asking. */
export interface ControlContext {
  d: DaemonControl;
  session: Session;
}
