import type { ClientCapabilities, Logger, SelectParams } from "@mcpd/protocol/core";
import { runAutostart } from "./autostart.js";
import { CLIENT_DEFAULTS } from "./defaults.js";
import type { McpdClientOptions } from "./mcpd-client-options.js";
import type { ReconnectingSession } from "./reconnecting-session.js";

/** The capability a handler of each server-to-client request method declares. */
const CAPABILITY_OF: Record<string, "sampling" | "elicitation" | "roots"> = {
  "sampling/createMessage": "sampling",
  "elicitation/create": "elicitation",
  "roots/list": "roots",
};

/**
 * The server of the view `view` names: undefined for the aggregate view (`"aggregate"`, the default).
 * @throws TypeError when `view` is not a non-empty string.
 */
export function viewServerOf(view: string | undefined): string | undefined {
  if (view !== undefined && (typeof view !== "string" || view === "")) {
    throw new TypeError(`view must be "aggregate" or a server name, got ${JSON.stringify(view)}`);
  }
  return view === undefined || view === "aggregate" ? undefined : view;
}

/**
 * The `mcpd/select` params a client opens every connection with: events on, the view's server, the
 * selection (`profile`, `tools`) and `control` when asked for. The daemon checks the names and globs.
 * @throws TypeError when `control` is not a boolean, `profile` not a non-empty string, or `tools` not a
 *   non-empty array of non-empty strings.
 */
export function selectParams(
  viewServer: string | undefined,
  control: boolean | undefined,
  selection: Pick<McpdClientOptions, "profile" | "tools"> = {},
): SelectParams {
  if (control !== undefined && typeof control !== "boolean") {
    throw new TypeError(`control must be a boolean, got ${JSON.stringify(control)}`);
  }
  const { profile, tools } = selection;
  if (profile !== undefined && (typeof profile !== "string" || profile === "")) {
    throw new TypeError(`profile must be a profile's name, got ${JSON.stringify(profile)}`);
  }
  if (tools !== undefined && (!Array.isArray(tools) || tools.length === 0 || tools.some((g) => typeof g !== "string" || g === ""))) {
    throw new TypeError(`tools must be a non-empty array of tool globs such as ["github__*"], got ${JSON.stringify(tools)}`);
  }
  const select: SelectParams = { events: true };
  if (viewServer !== undefined) select.server = viewServer;
  if (profile !== undefined) select.profile = profile;
  if (tools !== undefined) select.tools = [...tools];
  if (control === true) select.control = true;
  return select;
}

/**
 * The capabilities declared in `initialize`: `base`, plus `sampling`, `elicitation` or `roots` for a
 * handler of `sampling/createMessage`, `elicitation/create` or `roots/list` among `handled` (the methods
 * with a handler), unless `base` says otherwise.
 */
export function declaredCapabilities(base: ClientCapabilities | undefined, handled: Iterable<string>): ClientCapabilities {
  const caps: ClientCapabilities = { ...base };
  for (const method of handled) {
    const cap = CAPABILITY_OF[method];
    if (cap && caps[cap] === undefined) caps[cap] = {};
  }
  return caps;
}

/**
 * Opens `session` (connection and handshake). When no daemon answers (`MCPD_DAEMON_UNAVAILABLE`) and
 * `options.autostart` says so, runs the autostart command (given the socket path when the caller chose
 * it) and opens again, by {@link CLIENT_DEFAULTS.autostartTimeoutMs} after the first attempt failed.
 * Any other error is thrown as is.
 */
export function openSession(session: ReconnectingSession, options: McpdClientOptions, socketPath: string, logger: Logger): Promise<void> {
  const autostart = options.autostart;
  if (!autostart) return session.open();
  return session.open(async () => {
    const deadline = Date.now() + CLIENT_DEFAULTS.autostartTimeoutMs;
    logger.info({ socketPath }, "mcpd is not running; starting it");
    await runAutostart(autostart, {
      ...(options.socketPath !== undefined ? { socketPath: options.socketPath } : {}),
      ...(options.env ? { env: options.env } : {}),
    });
    return deadline;
  });
}
