/**
 * The conformance suite's CLI cannot send headers, and every request to mcpd's HTTP front end needs the
 * bearer token: `authRelay(front)` is a loopback relay that adds `Authorization` to each request and
 * passes everything else (Host and Origin included, so the DNS-rebinding scenario reaches mcpd's own
 * checks) through unchanged, streaming both ways.
 */
import { createServer, type IncomingMessage, request as httpRequest, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { HttpFrontInfo } from "../http/http-harness.js";

export interface AuthRelay {
  /** `http://127.0.0.1:<port>`: mcpd's paths (`/servers/<name>/mcp`) go after it. */
  url: string;
  /** Stops listening and drops every open connection. */
  close(): Promise<void>;
}

/** A loopback relay to `target` that adds the bearer token to every request. */
export function authRelay(target: HttpFrontInfo): Promise<AuthRelay> {
  const to = new URL(target.origin);
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const upstream = httpRequest(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${target.token}` },
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  // Idle keep-alive sockets outlive the CLI's own (undici drops its after 4 s): with Node's 5 s, on a loaded
  // machine the CLI can reuse a socket the relay is closing that moment, and its request fails.
  server.keepAliveTimeout = 60_000;
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close })),
  );
}
