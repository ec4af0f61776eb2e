/**
 * @mcpd/client/once: one request on a connection of its own, without the client itself (no session,
 * reconnection or protocol peer code): {@link requestControl} for a control method, {@link requestOnce}
 * for an MCP request. For processes that ask the daemon one thing and must start fast (the `mcpd`
 * commands, a status bar polling `mcpd/status`). Every export is also exported by the package's index.
 * Every export of this file is public API.
 */
export { type ControlRequestOptions, type RequestOnceOptions, requestControl, requestOnce } from "./one-request.js";
