import type { ClientCapabilities, Implementation, Logger } from "@mcpd/protocol/core";
import type { AutostartOption } from "./autostart.js";
import type { ReconnectOptions } from "./reconnecting-session.js";
import type { RequestOptions } from "./socket-connection.js";
import type { RequestHandler } from "./types.js";

/** Options of `connect` and `McpdClient`. Durations in ms. */
export interface McpdClientOptions {
  /** The daemon's socket. Default: found like the CLI does (`MCPD_SOCKET`, `MCPD_HOME`, ...; see `resolvePaths`). */
  socketPath?: string;
  /** Start the daemon when its socket does not answer. Default `false`. See {@link AutostartOption}. */
  autostart?: AutostartOption;
  /** Sent in `initialize`. Default `CLIENT_DEFAULTS.clientInfo`. */
  clientInfo?: Implementation;
  /**
   * Declared in `initialize`. `sampling`, `elicitation` and `roots` are added automatically when a handler
   * for `sampling/createMessage`, `elicitation/create` or `roots/list` is registered before (re)connecting.
   */
  capabilities?: ClientCapabilities;
  /** `"aggregate"` (default): every server. A server name: that server's transparent view. */
  view?: string;
  /**
   * A profile of the daemon's config (`mcpd.profiles.<name>`): this connection sees only what it selects
   * (its servers, tools, prompts, resources); anything else is left out of listings and refused by name
   * (`MCPD_HIDDEN`). An unknown name fails `connect` with `MCPD_UNKNOWN_PROFILE`. Default: none.
   */
  profile?: string;
  /**
   * One-off tool globs over the aggregate view's names (`["github__*", "*__search"]`; `*` any run of
   * characters, `?` one, `\` escapes): only the tools one of them matches. With `profile`, what both allow.
   */
  tools?: string[];
  /**
   * Open a control connection (`mcpd/select {"control": true}` as the first message): needed for
   * `McpdClient.shutdown`, `disable`, `enable`, `restart`, `reload`, `logs` and the full `status`.
   * Default `false`: an agent's connection, refused those with `MCPD_FORBIDDEN`. Give it to operator tools
   * only, never to a connection an LLM drives.
   */
  control?: boolean;
  /** Handlers of server-to-client requests, registered before connecting (so their capabilities are declared). */
  handlers?: Record<string, RequestHandler>;
  /** Default per-request deadline, in ms (default `CLIENT_DEFAULTS.requestTimeoutMs`). */
  timeout?: number;
  /** Deadline of one connection attempt including the handshake, in ms (default `CLIENT_DEFAULTS.connectTimeoutMs`). */
  connectTimeout?: number;
  /** Reconnection after the daemon went away; `false` closes the client instead. Default: 100 ms doubling to 5 s, forever. */
  reconnect?: false | ReconnectOptions;
  /** Where diagnostics go (a pino logger fits). Default: silent. */
  logger?: Logger;
  /** The environment the socket path and `MCPD_BIN` are read from. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/** Per-call options of `McpdClient.callTool` and friends: see {@link RequestOptions}. */
export type CallOptions = RequestOptions;

/** The arguments after the declaration in `McpdClient.control`: params may be left out when every one is optional. */
// biome-ignore lint/complexity/noBannedTypes: `{} extends P` is the standard test for "every property of P is optional".
export type ControlArgs<P> = {} extends P ? [params?: P, options?: CallOptions] : [params: P, options?: CallOptions];
