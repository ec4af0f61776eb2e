/**
 * @mcpd/client/control: one control request on a connection of its own ({@link requestControl}), without
 * the client itself (no session, reconnection or protocol peer code). For processes that ask the daemon
 * one thing and must start fast (the `mcpd` commands, a status bar polling `mcpd/status`). Every export is
 * also exported by the package's index. Every export of this file is public API.
 */
export { requestControl, type ControlRequestOptions } from "./control-request.js";
