/**
 * A malicious or broken authorization server gets a clear error naming the server and the rule it broke,
 * never a loop: metadata naming another issuer, past the size bound, redirecting elsewhere or malformed,
 * a token endpoint that is neither https nor on this machine or that redirects, and a resource server
 * that answers 401 to every token.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { HttpAuth } from "../../src/http/auth/http-auth.js";
import { OAuthClient } from "../../src/http/auth/oauth-client.js";
import type { OAuthProvider, OAuthSettings, OAuthTokens } from "../../src/http/auth/oauth-provider.js";
import { loadUndici, request } from "../../src/http/undici.js";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((s) => {
      const closed = new Promise((r) => s.close(r));
      s.closeAllConnections(); // the oversized answer's connection would hold close() for seconds
      return closed;
    }),
  );
});

/** A server whose answers `route` decides, on 127.0.0.1; `hits` counts requests by path. */
async function serve(route: (path: string, base: string, req: IncomingMessage, res: ServerResponse) => void) {
  const hits = new Map<string, number>();
  let base = "";
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    req.resume();
    req.on("end", () => route(path, base, req, res));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { base, hits };
}

const json = (res: ServerResponse, value: unknown, status = 200): void =>
  void res.writeHead(status, { "content-type": "application/json" }).end(typeof value === "string" ? value : JSON.stringify(value));

function provider(settings: OAuthSettings, tokens?: OAuthTokens): OAuthProvider {
  let stored = tokens;
  return {
    settings,
    tokens: () => stored,
    saveTokens: (t) => void (stored = t),
    registration: () => undefined,
    saveRegistration: () => {},
    redirect: () => {
      throw new Error("no user here");
    },
  };
}

const machine = { grant: "client_credentials" as const, clientId: "c", clientSecret: "s" };

/** Resource metadata naming the same origin as authorization server, and `metadata` as its metadata. */
function authServer(metadata: (base: string) => unknown) {
  return serve((path, base, _req, res) => {
    if (path === "/.well-known/oauth-protected-resource/mcp") return json(res, { resource: `${base}/mcp`, authorization_servers: [base] });
    if (path === "/.well-known/oauth-authorization-server") return json(res, metadata(base));
    if (path === "/token") return json(res, { access_token: "at", token_type: "Bearer", expires_in: 3600 });
    if (path === "/token-moved") return void res.writeHead(307, { location: "https://attacker.example.com/token" }).end();
    res.writeHead(404).end();
  });
}

describe("a malicious or broken authorization server", () => {
  it("metadata naming another issuer is not used (RFC 8414 3.3): the error names the server and the issuer rule", async () => {
    const { base, hits } = await authServer((b) => ({ issuer: "https://attacker.example.com", token_endpoint: `${b}/token` }));
    const client = new OAuthClient(new URL(`${base}/mcp`), provider(machine));
    const err = await client.authorize(undefined, "test").catch((e: Error & { code?: string }) => e);
    expect(err).toMatchObject({ code: "MCPD_OAUTH_DISCOVERY_FAILED" });
    expect((err as Error).message).toContain(`${base}/mcp`);
    expect((err as Error).message).toMatch(/"issuer" property does not match/);
    expect(hits.get("/token")).toBeUndefined();
  });

  it("metadata past the size bound is not read: the error names the server and the bound", async () => {
    const { base, hits } = await authServer((b) =>
      JSON.stringify({ issuer: b, token_endpoint: `${b}/token`, pad: "x".repeat(300 * 1024) }),
    );
    const err = await new OAuthClient(new URL(`${base}/mcp`), provider(machine)).authorize(undefined, "test").catch((e: Error) => e);
    expect((err as Error).message).toContain(`${base}/mcp`);
    expect((err as Error).message).toMatch(/exceeds the limit of 262144 bytes/);
    expect(hits.get("/token")).toBeUndefined();
  });

  it("a token endpoint that is neither https nor on this machine gets no credentials", async () => {
    const { base } = await authServer((b) => ({ issuer: b, token_endpoint: "http://192.0.2.1/token" }));
    const err = await new OAuthClient(new URL(`${base}/mcp`), provider(machine)).authorize(undefined, "test").catch((e: Error) => e);
    expect(err).toMatchObject({ code: "MCPD_OAUTH_UNSUPPORTED" });
    expect((err as Error).message).toMatch(/192\.0\.2\.1.* is neither https nor on this machine/);
  });

  it("an authorization endpoint that is neither https nor on this machine: the browser is never sent there", async () => {
    const { base } = await authServer((b) => ({
      issuer: b,
      authorization_endpoint: "http://192.0.2.1/authorize",
      token_endpoint: `${b}/token`,
      code_challenge_methods_supported: ["S256"],
    }));
    let redirected = 0;
    const user = { ...provider({ clientId: "c" }), redirect: () => void redirected++ };
    const err = await new OAuthClient(new URL(`${base}/mcp`), user).authorize(undefined, "test").catch((e: Error) => e);
    expect(err).toMatchObject({ code: "MCPD_OAUTH_UNSUPPORTED" });
    expect((err as Error).message).toBe("authorization endpoint http://192.0.2.1/authorize is neither https nor on this machine");
    expect(redirected).toBe(0);
  });

  it("metadata that redirects elsewhere is not followed: the error names the server, where it pointed and the rule", async () => {
    const { base, hits } = await serve((path, b, _req, res) => {
      if (path === "/.well-known/oauth-protected-resource/mcp") return json(res, { resource: `${b}/mcp`, authorization_servers: [b] });
      if (path === "/.well-known/oauth-authorization-server" || path === "/.well-known/openid-configuration")
        return void res.writeHead(302, { location: "http://192.0.2.1/.well-known/oauth-authorization-server" }).end();
      if (path === "/token") return json(res, { access_token: "at", token_type: "Bearer", expires_in: 3600 });
      res.writeHead(404).end();
    });
    const err = await new OAuthClient(new URL(`${base}/mcp`), provider(machine)).authorize(undefined, "test").catch((e: Error) => e);
    expect(err).toMatchObject({ code: "MCPD_OAUTH_DISCOVERY_FAILED" });
    expect((err as Error).message).toContain(`${base}/mcp`);
    expect((err as Error).message).toMatch(/HTTP 302 redirecting to http:\/\/192\.0\.2\.1\/\S+ \(not followed/);
    expect(hits.get("/token")).toBeUndefined();
  });

  it("a token endpoint that redirects elsewhere is not followed: the credentials stay where they were sent", async () => {
    const { base, hits } = await authServer((b) => ({ issuer: b, token_endpoint: `${b}/token-moved` }));
    const err = await new OAuthClient(new URL(`${base}/mcp`), provider(machine)).authorize(undefined, "test").catch((e: Error) => e);
    expect(err).toMatchObject({ code: "MCPD_OAUTH_TOKEN_REFUSED" });
    expect((err as Error).message).toMatch(/token request \(client_credentials\) to http:\/\/127\.0\.0\.1:\d+\/token-moved failed/);
    expect((err as Error).message).toMatch(/HTTP 307 redirecting to https:\/\/attacker\.example\.com\/token \(not followed/);
    expect(hits.get("/token")).toBeUndefined();
  });

  it("malformed metadata (not JSON, fields of the wrong type): the error names the server and what was wrong", async () => {
    const notJson = await authServer(() => "{ this is not json");
    const err = await new OAuthClient(new URL(`${notJson.base}/mcp`), provider(machine)).authorize(undefined, "t").catch((e: Error) => e);
    expect(err).toMatchObject({ code: "MCPD_OAUTH_DISCOVERY_FAILED" });
    expect((err as Error).message).toContain(`${notJson.base}/mcp`);
    expect((err as Error).message).toMatch(/JSON/);

    const wrongTypes = await serve((path, b, _req, res) => {
      if (path === "/.well-known/oauth-protected-resource/mcp") return json(res, { resource: `${b}/mcp`, authorization_servers: b });
      res.writeHead(404).end();
    });
    const err2 = await new OAuthClient(new URL(`${wrongTypes.base}/mcp`), provider(machine))
      .authorize(undefined, "t")
      .catch((e: Error) => e);
    expect(err2).toMatchObject({ code: "MCPD_OAUTH_DISCOVERY_FAILED" });
    expect((err2 as Error).message).toContain(`${wrongTypes.base}/mcp`);
    expect((err2 as Error).message).toMatch(/"authorization_servers" is not a list of URLs/);
  });

  it("a site's catch-all page at the well-known URLs is no metadata (the 2025-03-26 fallback); at the URL a challenge named, it fails discovery", async () => {
    const { base, hits } = await serve((path, _b, _req, res) => {
      if (path.startsWith("/.well-known/"))
        return void res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><p>app</p>");
      if (path === "/token") return json(res, { access_token: "at", token_type: "Bearer", expires_in: 3600 });
      res.writeHead(404).end();
    });
    const tokens = await new OAuthClient(new URL(`${base}/mcp`), provider(machine)).authorize(undefined, "test");
    expect(tokens).toMatchObject({ accessToken: "at", tokenEndpoint: `${base}/token` });
    expect(hits.get("/token")).toBe(1);

    const named = { resourceMetadata: `${base}/.well-known/oauth-protected-resource/mcp` };
    const err = await new OAuthClient(new URL(`${base}/mcp`), provider(machine)).authorize(named, "test").catch((e: Error) => e);
    expect(err).toMatchObject({ code: "MCPD_OAUTH_DISCOVERY_FAILED" });
    expect((err as Error).message).toContain(`${base}/.well-known/oauth-protected-resource/mcp: Unexpected token`);
    expect(hits.get("/token")).toBe(1);
  });

  it("a resource server answering 401 to every token: one new token, one retry, then an error naming the server and the rule (no loop)", async () => {
    const { base, hits } = await serve((path, b, _req, res) => {
      if (path === "/mcp")
        return void res
          .writeHead(401, {
            "www-authenticate": `Bearer error="invalid_token", error_description="nope", resource_metadata="${b}/.well-known/oauth-protected-resource/mcp"`,
          })
          .end();
      if (path === "/.well-known/oauth-protected-resource/mcp") return json(res, { resource: `${b}/mcp`, authorization_servers: [b] });
      if (path === "/.well-known/oauth-authorization-server") return json(res, { issuer: b, token_endpoint: `${b}/token` });
      if (path === "/token") return json(res, { access_token: `at-${Math.random()}`, token_type: "Bearer", expires_in: 3600 });
      res.writeHead(404).end();
    });
    await loadUndici();
    const url = new URL(`${base}/mcp`);
    const auth = new HttpAuth(url, provider(machine), undefined, { trace() {}, debug() {}, info() {}, warn() {}, error() {} });
    const err = await auth
      .send({}, (headers) => request(url, { method: "POST", headers, body: "{}" }), AbortSignal.timeout(30_000))
      .catch((e: Error) => e);
    expect(err).toMatchObject({ code: "MCPD_OAUTH_TOKEN_REJECTED" });
    expect((err as Error).message).toBe(
      `${base}/mcp answered HTTP 401 (invalid_token: nope) to an access token just obtained from ${base}: ` +
        "not trying again (one new token per refused request); the server or its authorization server is misconfigured",
    );
    expect(hits.get("/mcp")).toBe(2);
    expect(hits.get("/token")).toBe(1);
  });

  it("a 401 of another scheme (Basic) is not OAuth's: the answer is returned as it is, no token requested", async () => {
    const { base, hits } = await serve((path, _b, _req, res) => {
      if (path === "/mcp") return void res.writeHead(401, { "www-authenticate": 'Basic realm="x"' }).end();
      res.writeHead(404).end();
    });
    await loadUndici();
    const url = new URL(`${base}/mcp`);
    const auth = new HttpAuth(url, provider(machine), undefined, { trace() {}, debug() {}, info() {}, warn() {}, error() {} });
    const res = await auth.send({}, (headers) => request(url, { method: "POST", headers, body: "{}" }), AbortSignal.timeout(30_000));
    expect(res.statusCode).toBe(401);
    await res.body.dump();
    expect(hits.get("/mcp")).toBe(1);
    expect(hits.get("/token")).toBeUndefined();
  });
});
