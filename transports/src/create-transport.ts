import { ConfigError } from "@mcpd/protocol";
import { StdioTransport } from "./stdio-transport.js";
import type { MCPTransport, TransportConfig, TransportOptions } from "./transport.js";
import { WebSocketTransport } from "./ws-transport.js";

/**
 * Picks the transport for a server config: `type` missing or `"stdio"` -> {@link StdioTransport};
 * `"http"` (Streamable HTTP, falling back to legacy HTTP+SSE) or `"sse"` (legacy) -> {@link HttpTransport};
 * `"ws"` -> {@link WebSocketTransport}.
 * @throws ConfigError (MCPD_CONFIG_INVALID) for an unknown type.
 */
export function createTransport(config: TransportConfig, options: TransportOptions = {}): MCPTransport {
  const type = config.type ?? "stdio";
  switch (type) {
    case "stdio":
      return new StdioTransport(config as Extract<TransportConfig, { command: string }>, options);
    case "http":
    case "sse":
      // HTTP_TRANSPORT_PENDING: wired when transports/src/http-transport.ts lands.
      throw new ConfigError(`Transport type "${type}" is not available in this build yet`);
    case "ws":
      return new WebSocketTransport(config as Extract<TransportConfig, { type: "ws" }>, options);
    default:
      throw new ConfigError(`Unknown transport type "${String(type)}" (expected stdio, http, sse or ws)`);
  }
}
