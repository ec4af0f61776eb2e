/**
 * mcpd's control protocol: every `mcpd/*` method and mcpd's own notification, declared once. These
 * declarations are the source of truth: the daemon answers exactly these (its dispatcher is a
 * {@link ControlHandlers} table, checked by the compiler), the client SDK and the `mcpd` command call them
 * through `control(declaration, params)`, and docs/protocol.md describes them.
 */
import { controlMethod, controlNotification, type ControlHandler } from "./control-method.js";
import {
  SELECT_RESULT_FIELDS,
  SERVER_SUMMARY_FIELDS,
  type LogsParams,
  type LogsResult,
  type NoParams,
  type PromptsResult,
  type ReloadResult,
  type ResourcesResult,
  type RestartResult,
  type SelectParams,
  type SelectResult,
  type ServerFilter,
  type ServerParams,
  type ServerStateParams,
  type ServerStateResult,
  type ServersResult,
  type ShutdownResult,
  type ToolsParams,
  type ToolsResult,
} from "./control-types.js";
import { CLIENT_STATUS_FIELDS, SERVER_STATUS_FIELDS, type StatusResult } from "./status-types.js";
import type { AuthLogoutResult, AuthStartResult, AuthWaitResult } from "./auth-types.js";
import {
  HTTP_TOKEN_INFO_FIELDS,
  HTTP_TOKEN_ISSUE_RESULT_FIELDS,
  HTTP_TOKEN_REVOKE_RESULT_FIELDS,
  type HttpTokenIssueParams,
  type HttpTokenIssueResult,
  type HttpTokenListResult,
  type HttpTokenRevokeParams,
  type HttpTokenRevokeResult,
} from "./http-token-types.js";
import { HTTP_FRONT_STATUS_FIELDS } from "./http-front-status.js";
import type { DashboardLoginResult } from "./dashboard-types.js";

/**
 * Chooses the connection's view (a server's, or the aggregate) before `initialize`, and whether it is a
 * control connection. Answered by the downstream session itself, not the control dispatcher.
 */
export const McpdSelect = controlMethod("mcpd/select")<SelectParams, SelectResult>({ privileged: false, result: SELECT_RESULT_FIELDS });

/** The daemon, every server and the other connections; restricted on a connection that is not a control connection. */
export const McpdStatus = controlMethod("mcpd/status")<NoParams, StatusResult>({
  privileged: false,
  result: {
    restricted: "optional",
    daemon: {
      presence: "required",
      fields: {
        pid: "required",
        version: "required",
        startedAt: "required",
        uptimeMs: "required",
        socketPath: "optional",
        pidFile: "optional",
        configFile: "optional",
        configSource: "optional",
        logFile: "optional",
        log: {
          presence: "optional",
          fields: { droppedLines: "required", lastError: "required", lastErrorAt: "required", failing: "required" },
        },
        connections: "optional",
        maxConnections: "optional",
        bufferedBytes: "optional",
        maxBufferedBytesTotal: "optional",
        partialLineTimeoutMs: "optional",
        dropped: {
          presence: "optional",
          fields: { tooManyConnections: "required", overBudget: "required", lineTimeout: "required", notReading: "required" },
        },
        socket: {
          presence: "optional",
          fields: { path: "required", recreated: "required", lastProblem: "required", lastProblemAt: "required" },
        },
      },
    },
    servers: { presence: "required", fields: SERVER_STATUS_FIELDS },
    clients: { presence: "required", fields: CLIENT_STATUS_FIELDS },
    tables: {
      presence: "required",
      fields: { progress: "required", progressDropped: "required", subscriptions: "required", relayed: "required", inFlight: "required" },
    },
    http: { presence: "optional", fields: HTTP_FRONT_STATUS_FIELDS },
  },
});

/** The configured servers with their state and transport. */
export const McpdServers = controlMethod("mcpd/servers")<NoParams, ServersResult>({
  privileged: false,
  result: { servers: { presence: "required", fields: SERVER_SUMMARY_FIELDS } },
});

/**
 * Tools with their server; without `server`, exactly the aggregate view's `tools/list` as the given
 * profile or tool globs select it (by default, as the asking connection's own selection does).
 */
export const McpdTools = controlMethod("mcpd/tools")<ToolsParams, ToolsResult>({
  privileged: false,
  result: { tools: "required", toolSearch: "optional" },
});

/** Prompts with their server. */
export const McpdPrompts = controlMethod("mcpd/prompts")<ServerFilter, PromptsResult>({
  privileged: false,
  result: { prompts: "required" },
});

/** Resources and resource templates with their server. */
export const McpdResources = controlMethod("mcpd/resources")<ServerFilter, ResourcesResult>({
  privileged: false,
  result: { resources: "required", templates: "required" },
});

/** Restarts one server, or every server. */
export const McpdRestart = controlMethod("mcpd/restart")<ServerFilter, RestartResult>({
  privileged: true,
  result: { restarted: "required" },
});

/** Enables a server (starting it per its startup mode). */
export const McpdEnable = controlMethod("mcpd/enable")<ServerParams, ServerStateResult>({
  privileged: true,
  result: { server: "required", state: "required" },
});

/** Disables a server (stopping it). */
export const McpdDisable = controlMethod("mcpd/disable")<ServerParams, ServerStateResult>({
  privileged: true,
  result: { server: "required", state: "required" },
});

/** Re-reads the config file; an invalid file keeps the old config and fails with -32602 naming the problem. */
export const McpdReload = controlMethod("mcpd/reload")<NoParams, ReloadResult>({
  privileged: true,
  result: { added: "required", removed: "required", changed: "required", unchanged: "required", warnings: "required" },
});

/** A server's stderr tail, or the daemon's recent log lines. */
export const McpdLogs = controlMethod("mcpd/logs")<LogsParams, LogsResult>({
  privileged: true,
  result: { server: "optional", lines: "required" },
});

/** Answers, then shuts the daemon down gracefully. */
export const McpdShutdown = controlMethod("mcpd/shutdown")<NoParams, ShutdownResult>({ privileged: true, result: { ok: "required" } });

/**
 * Starts authorizing mcpd with a server's OAuth authorization server (`mcpd auth SERVER`): the daemon
 * runs the flow (discovery, client registration, a loopback listener for the redirect) and answers with
 * the URL to open. Any authorization of that server still waiting is abandoned.
 */
export const McpdAuthStart = controlMethod("mcpd/authStart")<ServerParams, AuthStartResult>({
  privileged: true,
  result: { server: "required", url: "required", scopes: "required", redirectUri: "required" },
});

/** Waits for the authorization `mcpd/authStart` began, stores the tokens and restarts the server with them. */
export const McpdAuthWait = controlMethod("mcpd/authWait")<ServerParams, AuthWaitResult>({
  privileged: true,
  result: { server: "required", scopes: "required", state: "required", stateReason: "required" },
});

/** Forgets a server's tokens and client registration (`mcpd auth --logout SERVER`) and restarts it. */
export const McpdAuthLogout = controlMethod("mcpd/authLogout")<ServerParams, AuthLogoutResult>({
  privileged: true,
  result: { server: "required", forgotten: "required", state: "required" },
});

/**
 * Issues a scoped token for the HTTP front end (`mcpd http --profile NAME`, `--server NAME`): it opens that
 * profile's or server's endpoints only. The token is in this answer alone; the daemon keeps its SHA-256.
 */
export const McpdHttpTokenIssue = controlMethod("mcpd/httpTokenIssue")<HttpTokenIssueParams, HttpTokenIssueResult>({
  privileged: true,
  result: HTTP_TOKEN_ISSUE_RESULT_FIELDS,
});

/** The scoped HTTP tokens (`mcpd http tokens`): id, scope and when issued, never the secret. */
export const McpdHttpTokenList = controlMethod("mcpd/httpTokenList")<NoParams, HttpTokenListResult>({
  privileged: true,
  result: { tokens: { presence: "required", fields: HTTP_TOKEN_INFO_FIELDS }, max: "required" },
});

/** Revokes a scoped HTTP token (`mcpd http tokens revoke ID`) and ends the sessions opened with it, at once. */
export const McpdHttpTokenRevoke = controlMethod("mcpd/httpTokenRevoke")<HttpTokenRevokeParams, HttpTokenRevokeResult>({
  privileged: true,
  result: HTTP_TOKEN_REVOKE_RESULT_FIELDS,
});

/**
 * Issues a one-time login link into the dashboard (`mcpd dashboard`): single use, valid one minute. The
 * link exchanges itself for the dashboard's session cookie; no token of the HTTP front end opens the dashboard.
 */
export const McpdDashboardLogin = controlMethod("mcpd/dashboardLogin")<NoParams, DashboardLoginResult>({
  privileged: true,
  result: { url: "required", expiresAt: "required" },
});

/** A server's state changed; sent to connections that selected `events: true`. */
export const McpdServerStateNotification = controlNotification("notifications/mcpd/serverState")<ServerStateParams>({
  params: { server: "required", state: "required", previous: "required", reason: "required" },
});

/** Every control method, in the order of docs/protocol.md. */
export const CONTROL_METHODS = [
  McpdSelect,
  McpdStatus,
  McpdServers,
  McpdTools,
  McpdPrompts,
  McpdResources,
  McpdRestart,
  McpdEnable,
  McpdDisable,
  McpdReload,
  McpdLogs,
  McpdShutdown,
  McpdAuthStart,
  McpdAuthWait,
  McpdAuthLogout,
  McpdHttpTokenIssue,
  McpdHttpTokenList,
  McpdHttpTokenRevoke,
  McpdDashboardLogin,
] as const;

/** Any declared control method. */
export type AnyControlMethod = (typeof CONTROL_METHODS)[number];

/** The control methods a control dispatcher answers: every one but `mcpd/select`, which the session answers. */
export type DispatchedControlMethod = Exclude<AnyControlMethod, typeof McpdSelect>;

/**
 * A control dispatcher: one {@link ControlHandler} per dispatched method, no more, no less, each typed by
 * its declaration.
 */
export type ControlHandlers<Ctx> = { readonly [D in DispatchedControlMethod as D["method"]]: ControlHandler<D, Ctx> };

const BY_NAME: ReadonlyMap<string, AnyControlMethod> = new Map(CONTROL_METHODS.map((d) => [d.method, d]));

/** The declaration of a control method by name, or undefined when `method` is not one. */
export function controlMethodNamed(method: string): AnyControlMethod | undefined {
  return BY_NAME.get(method);
}
