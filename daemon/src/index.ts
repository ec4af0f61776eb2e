/**
 * @mcpd/daemon: the daemon (manager, router, socket server) and the `mcpd` command.
 * Every export of this file is public API.
 */
export { runDaemon, startDaemon, type RunDaemonOptions, type DaemonHandle } from "./daemon.js";
export { runBridge, type BridgeOptions } from "./cli/bridge.js";
export { DAEMON_ALLOCATOR_ENV } from "./infra/allocator-env.js";
export { DAEMON_NODE_FLAGS } from "./infra/node-flags.js";
export { UpstreamClient, type ListKind, type UpstreamClientOptions, type UpstreamRequestHandler } from "./supervision/upstream-client.js";
export { MCPManager, type ManagerListener, type ManagerOptions, type ReloadDiff } from "./supervision/manager.js";
export { ManagerDirectory } from "./composition/manager-directory.js";
export { ServerHandle, type ServerState, type StateChange } from "./supervision/server-handle.js";
export { Router } from "./router/router.js";
export type { ServerDirectory, Upstream, UpstreamEvents, UpstreamSession } from "./router/upstream-port.js";
export { exposedName, EXPOSED_NAME_PATTERN } from "./router/exposed-names.js";
export { CONFIG_DEFAULTS, RUNTIME_DEFAULTS } from "./defaults.js";
export * from "./config/index.js";
