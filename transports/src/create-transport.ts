import { ConfigError } from "@mcpd/protocol";
import { HttpTransport, type HttpTransportOptions } from "./http/http-transport.js";
import { StdioTransport } from "./stdio/stdio-transport.js";
import type { MCPTransport, TransportConfig, TransportOptions } from "./transport.js";
import { WebSocketTransport } from "./ws/ws-transport.js";

/**
 * Picks the transport for a server config: `type` missing or `"stdio"` -> {@link StdioTransport};
 * `"http"` (Streamable HTTP, falling back to legacy HTTP+SSE) or `"sse"` (legacy) -> {@link HttpTransport};
 * `"ws"` -> {@link WebSocketTransport}. `options.auth` (OAuth) is used by the HTTP transport only.
 * @throws ConfigError (MCPD_CONFIG_INVALID) for an unknown type.
 */
export function createTransport(
  config: TransportConfig,
  options: TransportOptions & Pick<HttpTransportOptions, "auth"> = {},
): MCPTransport {
  const type = config.type ?? "stdio";
  switch (type) {
    case "stdio":
      return new StdioTransport(config as Extract<TransportConfig, { command: string }>, { ...withoutAuth(options) });
    case "http":
    case "sse":
      return new HttpTransport(config as Extract<TransportConfig, { type: "http" | "sse" }>, options);
    case "ws":
      return new WebSocketTransport(config as Extract<TransportConfig, { type: "ws" }>, { ...withoutAuth(options) });
    default:
      throw new ConfigError(`Unknown transport type "${String(type)}" (expected stdio, http, sse or ws)`);
  }
}

function withoutAuth(options: TransportOptions & { auth?: unknown }): TransportOptions {
  const { auth: _auth, ...rest } = options;
  return rest;
}
