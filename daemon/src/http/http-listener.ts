import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "@mcpd/protocol";
import type { HttpSettings } from "../config/index.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";

const bracket = (host: string): string => (host.includes(":") ? `[${host}]` : host);

/**
 * Node's own deadlines for a front-end server, from `mcpd.http.requestTimeoutMs` (T): a request's headers
 * and body must arrive within T (of the connection, for its first request; Node answers 408 and closes
 * it); a connection idle between requests is closed after {@link RUNTIME_DEFAULTS.httpKeepAliveMs} (T
 * when lower). A body being read also has its own deadline, T from its headers (request-body.ts), which
 * answers with a JSON-RPC error when it comes first.
 */
export function applyTimeouts(server: Server, requestTimeoutMs: number): void {
  server.headersTimeout = requestTimeoutMs;
  server.requestTimeout = requestTimeoutMs;
  server.keepAliveTimeout = Math.min(requestTimeoutMs, RUNTIME_DEFAULTS.httpKeepAliveMs);
}

/**
 * A front-end server calling `handle` for each request. Node checks the headers and request deadlines
 * every tenth of T (at least every second; by default every 30 s, which let a slow client hold its
 * connection up to twice the deadline).
 */
export function newServer(handle: (req: IncomingMessage, res: ServerResponse) => void, requestTimeoutMs: number): Server {
  const connectionsCheckingInterval = Math.max(10, Math.min(1_000, Math.floor(requestTimeoutMs / 10)));
  const server = createServer({ connectionsCheckingInterval }, handle);
  applyTimeouts(server, requestTimeoutMs);
  return server;
}

/** Where the front end listens once it does, or why it does not. */
export type Listening = { servers: Server[]; url: string; addresses: string[] } | { error: string };

/**
 * Listens on `settings.host` and port, with servers from `make`: the default (`127.0.0.1`, `localhost`)
 * binds both loopback families on one port, as clients resolve `localhost` either way; a machine without
 * IPv6 serves on 127.0.0.1 alone. Never throws.
 */
export async function listenOn(settings: HttpSettings, make: () => Server, log: Logger): Promise<Listening> {
  const hosts = settings.host === "127.0.0.1" || settings.host === "localhost" ? ["127.0.0.1", "::1"] : [settings.host];
  let port = settings.port;
  const addresses: string[] = [];
  const servers: Server[] = [];
  for (const [i, host] of hosts.entries()) {
    const server = make();
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen({ host, port, exclusive: true }, () => {
          server.off("error", reject);
          resolve();
        });
      });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      server.close();
      // The second family is a convenience.
      if (i > 0 && (e.code === "EADDRNOTAVAIL" || e.code === "EAFNOSUPPORT")) continue;
      const why =
        e.code === "EADDRINUSE"
          ? `port ${port} on ${host} is in use (EADDRINUSE); set "mcpd.http.port" to a free one, or 0 for any`
          : `cannot listen on ${bracket(host)}:${port}: ${e.message}`;
      if (i === 0) return { error: why };
      log.warn({ err: why }, "HTTP front end serves IPv4 only");
      continue;
    }
    server.on("error", (err) => log.error({ err: err.message }, "HTTP front end server error; still listening"));
    const addr = server.address();
    if (addr && typeof addr === "object") port = addr.port;
    addresses.push(`${bracket(host)}:${port}`);
    servers.push(server);
  }
  const host = hosts[0] as string;
  const shown = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return { servers, url: `http://${bracket(shown)}:${port}/mcp`, addresses };
}

/**
 * Stops `servers` listening; resolves once each has closed. Idle connections are closed at once; one still
 * busy gets `lingerMs` to finish its answer, then is cut: a client that left a request half sent, or a
 * connection Node does not count as idle, must not hold the daemon's exit for its deadline.
 */
export async function closeServers(servers: readonly Server[], lingerMs = RUNTIME_DEFAULTS.httpCloseLingerMs): Promise<void> {
  await Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((resolve) => {
          const cut = setTimeout(() => s.closeAllConnections(), lingerMs);
          s.close(() => {
            clearTimeout(cut);
            resolve();
          });
          s.closeIdleConnections();
        }),
    ),
  );
}
