/**
 * The cancellation of one relayed request, without an AbortSignal per request: the JSON-RPC peer's
 * (`@mcpd/protocol`), kept under this path for the router's downstream sessions.
 */
export { Cancellation } from "@mcpd/protocol";
