/**
 * @mcpd/client/once: one MCP request on a connection of its own ({@link requestOnce}), without the
 * session client (no reconnection, subscriptions or server-to-client handlers). Every export is also
 * exported by the package's index. Every export of this file is public API.
 */
export { requestOnce, type RequestOnceOptions } from "./request-once.js";
