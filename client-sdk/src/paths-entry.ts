/**
 * @mcpd/client/paths: where the daemon keeps its socket and state, and whether a socket may be trusted,
 * without the client itself (no connection, session or protocol peer code). For processes that must start
 * fast (`mcpd connect`). Every export is also exported by the package's index. Every export of this file
 * is public API.
 */
export * from "./paths.js";
export { checkSocketTrust, assertTrustedSocket, privateDirFault, type SocketTrustProblem } from "./socket-trust.js";
