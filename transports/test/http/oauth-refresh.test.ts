/**
 * When and where the OAuth client refreshes: a token close to expiry is sent while its refresh runs ahead
 * (a failing or hanging token endpoint never holds a request up while the token is still good), one
 * refresh runs at a time for every client of a server, and tokens are refreshed only at the authorization
 * server that issued them. Each case is a defect a review found, against a token endpoint on 127.0.0.1.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { silentLogger } from "@mcpd/protocol";
import { afterEach, describe, expect, it, vi } from "vitest";
import { OAuthClient } from "../../src/http/auth/oauth-client.js";
import type { ClientRegistration, OAuthProvider, OAuthSettings, OAuthTokens } from "../../src/http/auth/oauth-provider.js";

const servers: Server[] = [];
const clients: OAuthClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close(new Error("test over"));
  await Promise.all(
    servers.splice(0).map((s) => {
      s.closeAllConnections();
      return new Promise((r) => s.close(r));
    }),
  );
});

/** A server on 127.0.0.1 answering each request with `handle` (its body read first); its base URL. */
async function serve(handle: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => handle(req, body, res));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
}

/** A client registered with `issuer`, a public one. */
const registeredAt = (issuer: string): Record<string, ClientRegistration> => ({
  [issuer]: { issuer, clientId: `registered-at-${issuer}`, redirectUris: [], tokenEndpointAuthMethod: "none" },
});

/** A provider in memory over `tokens` (a client registered with their issuer unless told otherwise); no user to ask. */
function memoryProvider(
  tokens: OAuthTokens,
  settings: OAuthSettings = {},
  registrations: Record<string, ClientRegistration> = registeredAt(tokens.issuer ?? ""),
): OAuthProvider & { stored: OAuthTokens | undefined } {
  const p = {
    stored: tokens as OAuthTokens | undefined,
    settings,
    tokens: () => p.stored,
    saveTokens: (t: OAuthTokens | undefined) => void (p.stored = t),
    registration: (issuer: string) => registrations[issuer],
    saveRegistration: () => {},
    authorizationNeeded: (context: { reason: string }) => {
      throw new Error(`authorization needed: ${context.reason}`);
    },
    redirect: () => {
      throw new Error("no user here");
    },
  };
  return p;
}

/** Tokens of `issuer` for `resource` that expire `expiresInMs` from `now` (an hour's lifetime). */
function tokensOf(issuer: string, resource: string, now: number, expiresInMs: number): OAuthTokens {
  return {
    accessToken: "at-1",
    tokenType: "Bearer",
    refreshToken: "rt-1",
    obtainedAt: now + expiresInMs - 3_600_000,
    expiresAt: now + expiresInMs,
    scopes: [],
    resource,
    issuer,
    tokenEndpoint: `${issuer}/token`,
    grant: "authorization_code",
    clientAuthMethod: "none",
  };
}

/** A clock whose waits (the refresh backoff) pass at once. */
function fakeClock(start = Date.now()): { now: () => number; sleep: () => Promise<void>; set: (t: number) => void } {
  let now = start;
  return { now: () => now, sleep: async () => {}, set: (t) => void (now = t) };
}

describe("OAuth refresh", () => {
  it("regression: a token close to expiry is sent at once while one refresh round runs for all the requests, whatever the token endpoint does (a 503 made each waiting request run its own round, four token requests each)", async () => {
    let tokenRequests = 0;
    const base = await serve((_req, _body, res) => {
      tokenRequests++;
      json(res, 503, { error: "temporarily_unavailable" });
    });
    const clock = fakeClock();
    const failures: string[] = [];
    const logger = { ...silentLogger, warn: (_obj: object | string, msg?: string) => void failures.push(msg ?? "") };
    const provider = memoryProvider(tokensOf(base, `${base}/mcp`, clock.now(), 30_000));
    const client = new OAuthClient(new URL(`${base}/mcp`), provider, { clock, logger });
    clients.push(client);

    const sent = await Promise.all(Array.from({ length: 6 }, () => client.accessToken(AbortSignal.timeout(20_000))));
    expect(sent).toEqual(new Array(6).fill("at-1"));
    await vi.waitFor(() => expect(failures).toContain("token refresh failed; using the current token until it expires"), {
      timeout: 20_000,
    });
    expect(tokenRequests).toBe(4); // oauthRefreshAttempts, once
    expect(provider.stored?.refreshToken).toBe("rt-1");
  });

  it("regression: a hanging token endpoint does not hold up a request whose token is still good (it waited for the refresh until its own deadline)", async () => {
    const base = await serve(() => {}); // never answers
    const provider = memoryProvider(tokensOf(base, `${base}/mcp`, Date.now(), 30_000));
    const client = new OAuthClient(new URL(`${base}/mcp`), provider);
    clients.push(client);
    expect(await client.accessToken(AbortSignal.timeout(10_000))).toBe("at-1");
  });

  it("an expired token waits for its refresh, and every client of the server (per-client sessions) joins the one round: a rotating refresh token is sent once (the second client took the refusal of its reuse for a revocation and forgot the tokens)", async () => {
    const used = new Set<string>();
    let accepted = 0;
    const base = await serve((_req, body, res) => {
      const rt = new URLSearchParams(body).get("refresh_token") ?? "";
      if (used.has(rt)) return json(res, 400, { error: "invalid_grant" });
      used.add(rt);
      accepted++;
      // The first use is answered late, so a second use would be refused before it.
      setTimeout(() => json(res, 200, { access_token: "at-2", refresh_token: "rt-2", token_type: "Bearer", expires_in: 3600 }), 300);
    });
    const provider = memoryProvider(tokensOf(base, `${base}/mcp`, Date.now(), -1_000));
    const url = new URL(`${base}/mcp`);
    const a = new OAuthClient(url, provider);
    const b = new OAuthClient(url, provider);
    clients.push(a, b);
    expect(await Promise.all([a.accessToken(), b.accessToken()])).toEqual(["at-2", "at-2"]);
    expect(accepted).toBe(1);
    expect(used.size).toBe(1);
    expect(provider.stored).toMatchObject({ accessToken: "at-2", refreshToken: "rt-2" });
  });

  it("a client that joined another's refresh starts its own when that client closes meanwhile (it failed with the other's close)", async () => {
    let answered = 0;
    const base = await serve((_req, _body, res) => {
      setTimeout(() => json(res, 200, { access_token: `at-${++answered + 1}`, token_type: "Bearer", expires_in: 3600 }), 300);
    });
    const provider = memoryProvider(tokensOf(base, `${base}/mcp`, Date.now(), -1_000));
    const url = new URL(`${base}/mcp`);
    const a = new OAuthClient(url, provider);
    const b = new OAuthClient(url, provider);
    clients.push(a, b);
    const first = a.accessToken();
    const second = b.accessToken();
    a.close(new Error("a's transport closed"));
    await expect(first).rejects.toThrow("a's transport closed");
    expect(await second).toMatch(/^at-\d$/);
  });

  it.each([
    ["a configured client (its secret)", { clientId: "cid", clientSecret: "secret-for-a" }, false],
    ["a client registered with the old authorization server", {}, true],
  ] as const)(
    "regression: after the server moved to another authorization server, its old tokens are refreshed only where they were issued, with %s (they went to the new one's token endpoint)",
    async (_what, settings, registered) => {
      const posts: string[] = [];
      let names = "as-a";
      const base = await serve((req, _body, res) => {
        const path = new URL(req.url ?? "/", "http://x").pathname;
        if (path === "/.well-known/oauth-protected-resource/mcp")
          return json(res, 200, { resource: `${base}/mcp`, authorization_servers: [`${base}/${names}`] });
        const as = /^\/\.well-known\/oauth-authorization-server\/(as-[ab])$/.exec(path)?.[1];
        if (as) {
          const issuer = `${base}/${as}`;
          return json(res, 200, {
            issuer,
            authorization_endpoint: `${issuer}/authorize`,
            token_endpoint: `${issuer}/token`,
            code_challenge_methods_supported: ["S256"],
          });
        }
        if (req.method === "POST") {
          posts.push(path);
          return json(res, 200, { access_token: `at-from-${path}`, token_type: "Bearer", expires_in: 3600 });
        }
        res.writeHead(404).end();
      });
      const clock = fakeClock();
      const issuerA = `${base}/as-a`;
      const tokens = {
        ...tokensOf(issuerA, `${base}/mcp`, clock.now(), 3_000_000),
        clientAuthMethod: registered ? "none" : "client_secret_basic",
      };
      const registrations = registered ? registeredAt(issuerA) : {};
      const provider = memoryProvider(tokens, settings, registrations);
      const client = new OAuthClient(new URL(`${base}/mcp`), provider, { clock });
      clients.push(client);

      names = "as-b"; // the server's resource metadata now names another authorization server
      await expect(client.unauthorized({}, "at-1")).rejects.toThrow(/moved to the authorization server .*as-b/);
      clock.set(tokens.expiresAt! + 1_000);
      expect(await client.accessToken()).toBe("at-from-/as-a/token");
      expect(posts).toEqual(["/as-a/token"]);
      expect(provider.stored?.issuer).toBe(issuerA);
    },
  );
});
