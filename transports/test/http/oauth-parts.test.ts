/**
 * The OAuth client's parts on their own: challenge parsing, the resource check, where metadata is
 * looked for, scope selection, the loopback listener's `state` check, client assertions, and the
 * refresh of a token close to expiry. The whole flows run in tests/conformance (19 auth scenarios) and
 * tests/cli/cli-auth.test.ts.
 */
import { createServer, type Server } from "node:http";
import { generateKeyPairSync, verify } from "node:crypto";
import { OAuthError } from "@mcpd/protocol";
import { afterEach, describe, expect, it, vi } from "vitest";
import { authServerMetadataUrls, resourceMetadataUrls } from "../../src/http/auth/discovery.js";
import { clientAuthentication } from "../../src/http/auth/client-identity.js";
import { chooseAlgorithm } from "../../src/http/auth/signing-key.js";
import { LoopbackRedirect } from "../../src/http/auth/loopback-redirect.js";
import { OAuthClient } from "../../src/http/auth/oauth-client.js";
import type { OAuthProvider, OAuthTokens } from "../../src/http/auth/oauth-provider.js";
import { canonicalResource, checkResource, resourceCovers } from "../../src/http/auth/resource-match.js";
import { chooseScopes } from "../../src/http/auth/scope-selection.js";
import { parseBearerChallenge } from "../../src/http/auth/www-authenticate.js";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

describe("WWW-Authenticate", () => {
  it("reads the Bearer challenge among others: quoted values with escapes, names in any case, scope split", async () => {
    const header =
      'Basic realm="x", Bearer Scope="a  b", resource_metadata="https://h/.well-known/r?x=1,2", error="insufficient_scope", error_description="say \\"more\\""';
    expect(await parseBearerChallenge(header)).toEqual({
      scopes: ["a", "b"],
      resourceMetadata: "https://h/.well-known/r?x=1,2",
      error: "insufficient_scope",
      errorDescription: 'say "more"',
    });
    expect(await parseBearerChallenge("Bearer")).toEqual({});
    expect(await parseBearerChallenge('Basic realm="api"')).toBeUndefined();
    expect(await parseBearerChallenge(undefined)).toBeUndefined();
    expect(await parseBearerChallenge('Bearer error=invalid_token, scope=""')).toEqual({ error: "invalid_token", scopes: [] });
  });
});

describe("the resource check", () => {
  it("canonical URIs drop query, fragment and trailing slash; metadata covers the server or a parent path only, same origin", () => {
    expect(canonicalResource(new URL("HTTPS://MCP.Example.com/mcp/?token=x#f"))).toBe("https://mcp.example.com/mcp");
    expect(canonicalResource(new URL("https://mcp.example.com/"))).toBe("https://mcp.example.com");
    const server = new URL("https://h.example.com/tenant/mcp");
    expect(resourceCovers("https://h.example.com/tenant/mcp", server)).toBe(true);
    expect(resourceCovers("https://h.example.com/tenant/mcp/", server)).toBe(true);
    expect(resourceCovers("https://h.example.com", server)).toBe(true);
    expect(resourceCovers("https://h.example.com/ten", server)).toBe(false);
    expect(resourceCovers("https://evil.example.com/tenant/mcp", server)).toBe(false);
    expect(resourceCovers("http://h.example.com/tenant/mcp", server)).toBe(false);
    expect(resourceCovers("not a url", server)).toBe(false);
    expect(() => checkResource("https://evil.example.com/mcp", server)).toThrow(OAuthError);
  });
});

describe("where metadata is looked for", () => {
  it("protected resource metadata: the challenge's URL, then the path-based well-known URI, then the root one", () => {
    const server = new URL("https://h.example.com/public/mcp");
    expect(resourceMetadataUrls(server, "https://h.example.com/custom.json").map(String)).toEqual([
      "https://h.example.com/custom.json",
      "https://h.example.com/.well-known/oauth-protected-resource/public/mcp",
      "https://h.example.com/.well-known/oauth-protected-resource",
    ]);
    // A challenge URL neither https, loopback nor the server's own origin is not fetched.
    expect(resourceMetadataUrls(server, "http://elsewhere.example.com/r").map(String)).toHaveLength(2);
    expect(resourceMetadataUrls(new URL("https://h.example.com/"), undefined).map(String)).toEqual([
      "https://h.example.com/.well-known/oauth-protected-resource",
    ]);
  });

  it("authorization server metadata: RFC 8414 and OpenID Connect, with the path inserted then appended", () => {
    expect(authServerMetadataUrls(new URL("https://a.example.com/tenant1")).map(String)).toEqual([
      "https://a.example.com/.well-known/oauth-authorization-server/tenant1",
      "https://a.example.com/.well-known/openid-configuration/tenant1",
      "https://a.example.com/tenant1/.well-known/openid-configuration",
    ]);
    expect(authServerMetadataUrls(new URL("https://a.example.com")).map(String)).toEqual([
      "https://a.example.com/.well-known/oauth-authorization-server",
      "https://a.example.com/.well-known/openid-configuration",
    ]);
  });
});

describe("scope selection", () => {
  const base = { configured: undefined, challenge: undefined, scopesSupported: undefined, granted: [], stepUp: false };
  it("configured, else the challenge's, else scopes_supported, else none; a step-up keeps what was granted", () => {
    expect(chooseScopes({ ...base, configured: ["c"], challenge: { scopes: ["x"] }, scopesSupported: ["s"] })).toEqual(["c"]);
    expect(chooseScopes({ ...base, challenge: { scopes: ["x"] }, scopesSupported: ["s"] })).toEqual(["x"]);
    expect(chooseScopes({ ...base, challenge: {}, scopesSupported: ["s", "t"] })).toEqual(["s", "t"]);
    expect(chooseScopes(base)).toEqual([]);
    expect(chooseScopes({ ...base, stepUp: true, granted: ["a", "b"], challenge: { scopes: ["b", "c"] } })).toEqual(["a", "b", "c"]);
    expect(chooseScopes({ ...base, stepUp: true, configured: ["a"], granted: ["a"], challenge: { scopes: ["z"] } })).toEqual(["a", "z"]);
  });
});

describe("the loopback listener", () => {
  it("ignores a redirect with another state (400), takes the one with its own, and closes", async () => {
    const loopback = new LoopbackRedirect("the-state");
    await loopback.listen(0, true);
    const base = loopback.redirectUri;
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect((await fetch(`${base}?code=forged&state=other`)).status).toBe(400);
    expect((await fetch(base.replace("/callback", "/elsewhere"))).status).toBe(404);
    const ok = await fetch(`${base}?code=good&state=the-state`);
    expect(ok.status).toBe(200);
    expect((await loopback.wait(10_000)).searchParams.get("code")).toBe("good");
    await expect(fetch(base)).rejects.toThrow();
  });

  it("ends the wait with the authorization server's error (for oauth4webapi to judge), and with a timeout when nothing comes", async () => {
    const denied = new LoopbackRedirect("s");
    await denied.listen(0, true);
    expect((await fetch(`${denied.redirectUri}?error=access_denied&error_description=no&state=s`)).status).toBe(400);
    expect((await denied.wait(10_000)).searchParams.get("error")).toBe("access_denied");
    const idle = new LoopbackRedirect("s");
    await idle.listen(0, true);
    await expect(idle.wait(50)).rejects.toThrow(/no redirect came back/);
  });

  it("falls back to any port when the registered one is taken, unless the port was configured", async () => {
    const taken = createServer();
    servers.push(taken);
    const port = await new Promise<number>((r) => taken.listen(0, "127.0.0.1", () => r((taken.address() as { port: number }).port)));
    const fallback = new LoopbackRedirect("s");
    await fallback.listen(port, true);
    expect(fallback.redirectUri).not.toContain(`:${port}/`);
    fallback.close();
    await expect(new LoopbackRedirect("s").listen(port, false)).rejects.toMatchObject({ code: "EADDRINUSE" });
  });
});

describe("private_key_jwt client assertions", () => {
  it.each([
    ["ec", { namedCurve: "P-256" }, "ES256", "sha256", { dsaEncoding: "ieee-p1363" as const }],
    ["rsa", { modulusLength: 2048 }, "RS256", "sha256", {}],
    ["ed25519", {}, "EdDSA", null, {}],
  ] as const)(
    "signs with a %s key (%s) a JWT whose claims name the client and the issuer",
    async (type, options, alg, hash, verifyOptions) => {
      const { privateKey, publicKey } = generateKeyPairSync(type as "ec", options as { namedCurve: string });
      expect(chooseAlgorithm(privateKey, undefined, undefined)).toBe(alg);
      const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
      const as = { issuer: "https://as.example.com", token_endpoint: "https://as.example.com/token" };
      const identity = { clientId: "client-1", method: "private_key_jwt" as const, source: "configured" as const };
      const { client, auth } = await clientAuthentication(identity, as, { privateKey: pem });
      const body = new URLSearchParams();
      await auth(as, client, body, new Headers());
      const jwt = body.get("client_assertion") ?? "";
      expect(body.get("client_assertion_type")).toBe("urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
      const [header, payload, signature] = jwt.split(".") as [string, string, string];
      expect(JSON.parse(Buffer.from(header, "base64url").toString())).toMatchObject({ alg });
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
      expect(claims).toMatchObject({ iss: "client-1", sub: "client-1", aud: "https://as.example.com" });
      expect(claims.exp).toBeGreaterThan(claims.iat);
      expect(typeof claims.jti).toBe("string");
      expect(
        verify(hash, Buffer.from(`${header}.${payload}`), { key: publicKey, ...verifyOptions }, Buffer.from(signature, "base64url")),
      ).toBe(true);
    },
  );

  it("refuses a configured algorithm that does not fit the key, and prefers what the server offers", () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-384" });
    expect(() => chooseAlgorithm(privateKey, "ES256", undefined)).toThrow(/does not fit/);
    expect(chooseAlgorithm(privateKey, undefined, ["RS256", "ES384"])).toBe("ES384");
  });
});

describe("OAuthClient token lifetime", () => {
  /** A token endpoint that answers refresh_token grants with new tokens, counting them; `rotate`: each refresh token works once. */
  async function tokenEndpoint(rotate = false): Promise<{ url: string; refreshes: () => number }> {
    let count = 0;
    let valid = "rt-1";
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        const form = new URLSearchParams(body);
        if (form.get("grant_type") !== "refresh_token" || form.get("refresh_token") !== valid) {
          res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: "invalid_grant" }));
          return;
        }
        count++;
        const answer: Record<string, unknown> = { access_token: `at-${count + 1}`, token_type: "Bearer", expires_in: 3600 };
        if (rotate) {
          valid = `rt-${count + 1}`;
          answer.refresh_token = valid;
        }
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
      });
    });
    servers.push(server);
    const port = await new Promise<number>((r) => server.listen(0, "127.0.0.1", () => r((server.address() as { port: number }).port)));
    return { url: `http://127.0.0.1:${port}/token`, refreshes: () => count };
  }

  function provider(initial: OAuthTokens): OAuthProvider & { stored: OAuthTokens | undefined } {
    const p = {
      stored: initial as OAuthTokens | undefined,
      settings: {},
      tokens: () => p.stored,
      saveTokens: (t: OAuthTokens | undefined) => void (p.stored = t),
      registration: () => ({ issuer: "http://127.0.0.1", clientId: "c", redirectUris: [], tokenEndpointAuthMethod: "none" }),
      saveRegistration: () => {},
      redirect: () => {
        throw new Error("no user here");
      },
    };
    return p;
  }

  const tokens = (tokenEndpoint: string, expiresInMs: number): OAuthTokens => ({
    accessToken: "at-1",
    tokenType: "Bearer",
    refreshToken: "rt-1",
    obtainedAt: Date.now() - 3_600_000 + expiresInMs,
    expiresAt: Date.now() + expiresInMs,
    scopes: ["s"],
    resource: "http://127.0.0.1/mcp",
    issuer: "http://127.0.0.1",
    tokenEndpoint,
    grant: "authorization_code",
  });

  it("uses a token far from expiry as is; one within the margin goes out while its refresh runs ahead and replaces it (keeping the refresh token)", async () => {
    const ep = await tokenEndpoint();
    const fresh = provider(tokens(ep.url, 3_000_000));
    expect(await new OAuthClient(new URL("http://127.0.0.1/mcp"), fresh).accessToken()).toBe("at-1");
    expect(ep.refreshes()).toBe(0);
    const due = provider(tokens(ep.url, 10_000));
    const client = new OAuthClient(new URL("http://127.0.0.1/mcp"), due);
    expect(await client.accessToken()).toBe("at-1");
    await vi.waitFor(() => expect(due.stored).toMatchObject({ accessToken: "at-2", refreshToken: "rt-1", scopes: ["s"] }), {
      timeout: 20_000,
    });
    expect(await client.accessToken()).toBe("at-2");
    expect(ep.refreshes()).toBe(1);
  });

  it("regression: two sessions of one server refreshing an expired token at once keep the tokens of the refresh (rotation refused the other's refresh token)", async () => {
    const ep = await tokenEndpoint(true);
    const shared = provider(tokens(ep.url, -1_000));
    const url = new URL("http://127.0.0.1/mcp");
    const [a, b] = await Promise.all([new OAuthClient(url, shared).accessToken(), new OAuthClient(url, shared).accessToken()]);
    expect(ep.refreshes()).toBe(1);
    expect([a, b]).toEqual(["at-2", "at-2"]);
    expect(shared.stored).toMatchObject({ accessToken: "at-2", refreshToken: "rt-2" });
  });

  it("ignores stored tokens for another resource (the server's URL changed)", async () => {
    const ep = await tokenEndpoint();
    const other = provider({ ...tokens(ep.url, 3_000_000), resource: "http://127.0.0.1/other" });
    expect(await new OAuthClient(new URL("http://127.0.0.1/mcp"), other).accessToken()).toBeUndefined();
  });
});
