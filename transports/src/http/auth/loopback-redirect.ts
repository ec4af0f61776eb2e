import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { OAuthError, PROTOCOL_DEFAULTS, quote } from "@mcpd/protocol";
import { waitOrAbort } from "../http-wire.js";

// Each answer closes its connection, so the listener closes as soon as the answer is out.
const HTML = { "content-type": "text/html; charset=utf-8", connection: "close" };
const TEXT = { "content-type": "text/plain", connection: "close" };

const PAGE = (title: string, text: string): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head>` +
  `<body style="font-family:sans-serif;margin:3em"><h2>${title}</h2><p>${text}</p></body></html>`;

/**
 * The loopback listener of the authorization code grant (RFC 8252 section 7.3): an HTTP server on
 * `127.0.0.1` whose `/callback` receives the browser's redirect. Only a redirect carrying the expected
 * `state` counts: one with another state is answered 400 and ignored (it may be an old tab or a forged
 * link); an `error` with the right state ends the wait with it. Every other path is 404. The listener
 * closes when the wait ends.
 */
export class LoopbackRedirect {
  private server: Server | undefined;
  private portValue = 0;
  private received: (url: URL) => void = () => {};
  /** The redirect with the expected state (kept from its arrival: the browser may be quicker than the wait). */
  private readonly response = new Promise<URL>((resolve) => (this.received = resolve));

  constructor(private readonly state: string) {}

  /** `http://127.0.0.1:<port>/callback`, once listening. */
  get redirectUri(): string {
    return `http://127.0.0.1:${this.portValue}/callback`;
  }

  /**
   * Listens on 127.0.0.1:`port` (0: any free port). When `port` is taken and `fallback` is true, listens
   * on any free port instead (loopback redirects may use any port, RFC 8252 section 7.3).
   * @throws the listen error (EADDRINUSE when `port` is taken and there is no fallback).
   */
  async listen(port: number, fallback: boolean): Promise<void> {
    try {
      await this.listenOn(port);
    } catch (err) {
      if (!fallback || port === 0 || (err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
      await this.listenOn(0);
    }
  }

  private async listenOn(port: number): Promise<void> {
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      if (req.method !== "GET" || url.pathname !== "/callback") {
        res.writeHead(404, TEXT).end("not found");
      } else if (url.searchParams.get("state") !== this.state) {
        const text = "This redirect does not belong to the authorization mcpd is waiting for. Start again with the link mcpd printed.";
        res.writeHead(400, HTML).end(PAGE("mcpd: authorization not recognized", text));
      } else {
        // The response itself (code, error, iss) is judged by oauth4webapi; the page only says which it looks like.
        const error = url.searchParams.get("error");
        if (error !== null)
          res.writeHead(400, HTML).end(PAGE("mcpd: authorization failed", `The authorization server said: ${escapeHtml(error)}.`));
        else res.writeHead(200, HTML).end(PAGE("mcpd received the authorization", "You can close this tab and return to your terminal."));
        this.received(url);
      }
    });
    // The browser's request is tiny; nothing may hold the listener open.
    server.headersTimeout = 10_000;
    server.requestTimeout = 10_000;
    server.listen(port, "127.0.0.1");
    await once(server, "listening"); // rejects with the listen error
    // A later server error (out of descriptors at accept) must not crash the process; the wait's timeout ends it.
    server.on("error", () => {});
    this.server = server;
    this.portValue = (server.address() as AddressInfo).port;
  }

  /**
   * Waits for the redirect, at most `timeoutMs`, or until `signal` aborts; closes the listener either way.
   * @throws OAuthError (`MCPD_OAUTH_AUTHORIZATION_FAILED`) when nothing came in time; `signal.reason`.
   */
  async wait(timeoutMs: number, signal?: AbortSignal): Promise<URL> {
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      return await waitOrAbort(this.response, signal ? AbortSignal.any([signal, timeout]) : timeout);
    } catch (err) {
      if (signal?.aborted || !timeout.aborted) throw err;
      throw new OAuthError(
        "MCPD_OAUTH_AUTHORIZATION_FAILED",
        `no redirect came back to ${this.redirectUri} within ${Math.round(timeoutMs / 1000)} s (was the link opened and the access granted?)`,
      );
    } finally {
      this.close();
    }
  }

  /** Stops listening. Idempotent. */
  close(): void {
    this.server?.close();
    this.server = undefined;
  }
}

function escapeHtml(text: string): string {
  return quote(text, PROTOCOL_DEFAULTS.quotedNameChars).replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
