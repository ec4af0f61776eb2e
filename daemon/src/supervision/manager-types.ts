import type { ClientCapabilities, JsonObject, JsonRpcRequest, Logger, MessageContext } from "@mcpd/protocol";
import type { MCPTransport, TransportConfig } from "@mcpd/transports";
import type { ResolvedServerConfig } from "../config/config-schema.js";
import type { DaemonLogger } from "../infra/daemon-logger.js";
import type { ServerHandle, StateChange } from "./server-handle.js";
import type { ListKind } from "./upstream-client.js";

/** What the MCPManager (manager.ts) is made with, and what it tells its listeners. */

export interface ManagerOptions {
  createTransport: (config: TransportConfig, logger: Logger, server: ResolvedServerConfig) => MCPTransport;
  /** Each server logs through a child of it, at the server's `logLevel` when it has one. */
  logger?: DaemonLogger;
  /** Directory of the on-disk tool cache. */
  cacheDir?: string;
  /** File recording child process groups (orphan cleanup after a crash of mcpd). */
  childrenFile?: string;
  /** Capabilities mcpd declares upstream on behalf of its clients. */
  clientCapabilities?: ClientCapabilities;
}

/**
 * What the manager tells a listener about its servers, each call with the server's handle (a shared one,
 * or a connection's private session: notifications, states and list changes come from both).
 */
export interface ManagerListener {
  /** A configured server's handle was made (load, reload). */
  added?(handle: ServerHandle): void;
  /** A server left the config (reload); it is being stopped. */
  removed?(handle: ServerHandle): void;
  state?(handle: ServerHandle, change: StateChange): void;
  notification?(handle: ServerHandle, method: string, params: JsonObject | undefined, context: MessageContext): void;
  listChanged?(handle: ServerHandle, kind: ListKind): void;
}

/** Answers one server's sampling, elicitation or roots request; a rejection goes to the server as an error. */
export type ServerRequestAnswerer = (handle: ServerHandle, request: JsonRpcRequest, context: MessageContext) => Promise<JsonObject>;
