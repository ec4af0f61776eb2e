import {
  chmodSync,
  chownSync,
  closeSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateKeyPairSync } from "node:crypto";
import type { OAuthTokens } from "@mcpd/transports";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AuthStore } from "../../src/auth/auth-store.js";
import { oauthApplies } from "../../src/auth/auth-flows.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { redactServerConfig } from "../../src/config/redact-config.js";
import { SecretScrubber } from "../../src/secrets/index.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mcpd-auth-"));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function tokens(access: string, refresh?: string): OAuthTokens {
  return {
    accessToken: access,
    tokenType: "Bearer",
    ...(refresh ? { refreshToken: refresh } : {}),
    obtainedAt: Date.now(),
    expiresAt: Date.now() + 3_600_000,
    scopes: ["read"],
    resource: "https://mcp.example.com/mcp",
    issuer: "https://auth.example.com",
    tokenEndpoint: "https://auth.example.com/token",
    grant: "authorization_code",
  };
}

const A1 = "at_Qm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFi";
const R1 = "rt_WXl6enkxMjM0NTY3ODkwYWJjZGVmZ2hp";
const A2 = "at_c2Vjb25kYWNjZXNzdG9rZW52YWx1ZTEy";

describe("AuthStore: tokens and registrations in private files", () => {
  it("writes each server's tokens and registration as 0600 files in a 0700 directory, and reads them back in a new store", () => {
    const dir = join(root, "auth");
    const store = new AuthStore(dir);
    store.saveTokens("linear", tokens(A1, R1));
    store.saveRegistration("linear", "https://auth.example.com", {
      issuer: "https://auth.example.com",
      clientId: "c1",
      redirectUris: ["http://127.0.0.1:1/callback"],
    });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const f of ["linear.tokens.json", "linear.client.json"]) expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
    const again = new AuthStore(dir);
    expect(again.tokens("linear")?.accessToken).toBe(A1);
    expect(again.registration("linear", "https://auth.example.com")?.clientId).toBe("c1");
    expect(again.tokens("other")).toBeUndefined();
    expect(again.forget("linear")).toBe(true);
    expect(new AuthStore(dir).tokens("linear")).toBeUndefined();
    expect(again.forget("linear")).toBe(false);
  });

  it("makes a file someone widened private again, ignores one that is not its format, and never reads or writes through a symbolic link", () => {
    const dir = join(root, "auth");
    new AuthStore(dir).saveTokens("a", tokens(A1));
    chmodSync(join(dir, "a.tokens.json"), 0o644);
    expect(new AuthStore(dir).tokens("a")?.accessToken).toBe(A1);
    expect(statSync(join(dir, "a.tokens.json")).mode & 0o777).toBe(0o600);

    writeFileSync(join(dir, "b.tokens.json"), JSON.stringify({ hello: "world" }));
    expect(new AuthStore(dir).tokens("b")).toBeUndefined();

    const target = join(root, "elsewhere.json");
    writeFileSync(target, JSON.stringify(tokens(A2)));
    symlinkSync(target, join(dir, "c.tokens.json"));
    const store = new AuthStore(dir);
    expect(store.tokens("c")).toBeUndefined();
    store.saveTokens("c", tokens(A1));
    // The link itself was replaced by a file; its target is untouched.
    expect(lstatSync(join(dir, "c.tokens.json")).isSymbolicLink()).toBe(false);
    expect(JSON.parse(readFileSync(target, "utf8")).accessToken).toBe(A2);
  });

  it("keys tokens by issuer and resource and registrations by issuer: a server that moved keeps the old server's registration beside the new one", () => {
    const store = new AuthStore(join(root, "auth"));
    store.saveTokens("s", tokens(A1, R1));
    store.saveRegistration("s", "https://auth.example.com", { issuer: "https://auth.example.com", clientId: "old", redirectUris: [] });
    store.saveTokens("s", { ...tokens(A2), issuer: "https://new-as.example.com" });
    store.saveRegistration("s", "https://new-as.example.com", { issuer: "https://new-as.example.com", clientId: "new", redirectUris: [] });
    const again = new AuthStore(join(root, "auth"));
    expect(again.tokens("s")?.accessToken).toBe(A2);
    expect(again.registration("s", "https://auth.example.com")?.clientId).toBe("old");
    expect(again.registration("s", "https://new-as.example.com")?.clientId).toBe("new");
    expect(Object.keys(JSON.parse(readFileSync(join(root, "auth", "s.tokens.json"), "utf8")).tokens)).toEqual([
      "https://auth.example.com https://mcp.example.com/mcp",
      "https://new-as.example.com https://mcp.example.com/mcp",
    ]);
    again.saveTokens("s", undefined);
    expect(new AuthStore(join(root, "auth")).tokens("s")).toBeUndefined();
  });

  it("migrates the layout before (one object per file) at first read, so nobody logs in again after an upgrade", () => {
    const dir = join(root, "auth");
    mkdirSync(dir, { mode: 0o700 });
    const registration = { issuer: "https://auth.example.com", clientId: "c1", redirectUris: ["http://127.0.0.1:1/callback"] };
    writeFileSync(join(dir, "linear.tokens.json"), JSON.stringify(tokens(A1, R1)), { mode: 0o600 });
    writeFileSync(join(dir, "linear.client.json"), JSON.stringify(registration), { mode: 0o600 });
    const notes: string[] = [];
    const log = { trace() {}, debug() {}, warn() {}, error() {}, info: (_o: object | string, m?: string) => void notes.push(m ?? "") };
    const store = new AuthStore(dir, log);
    expect(store.tokens("linear")).toMatchObject({ accessToken: A1, refreshToken: R1 });
    expect(store.registration("linear", "https://auth.example.com")).toEqual(registration);
    expect(notes.join("\n")).toMatch(/tokens migrated/);
    const written = JSON.parse(readFileSync(join(dir, "linear.tokens.json"), "utf8"));
    expect(written).toMatchObject({ version: 2, current: "https://auth.example.com https://mcp.example.com/mcp" });
    expect(JSON.parse(readFileSync(join(dir, "linear.client.json"), "utf8"))).toEqual({
      version: 2,
      clients: { "https://auth.example.com": registration },
    });
    expect(statSync(join(dir, "linear.tokens.json")).mode & 0o777).toBe(0o600);
  });

  it("regression: a tokens file of another user (uid 65534) is ignored, and the next save replaces it with a new file of your own", ({
    skip,
  }) => {
    const dir = join(root, "auth");
    mkdirSync(dir, { mode: 0o700 });
    const file = join(dir, "a.tokens.json");
    writeFileSync(file, JSON.stringify(tokens(A2)), { mode: 0o600 });
    try {
      chownSync(file, 65534, 65534);
    } catch (err) {
      skip(`needs root to make a file of another user (chown: ${(err as NodeJS.ErrnoException).code})`);
    }
    const warnings: string[] = [];
    const log = { trace() {}, debug() {}, info() {}, error() {}, warn: (_o: object | string, m?: string) => void warnings.push(m ?? "") };
    const store = new AuthStore(dir, log);
    // Before the fix the other user's tokens (its token endpoint, its access token) were used.
    expect(store.tokens("a")).toBeUndefined();
    expect(warnings.join("\n")).toContain(`${file} is owned by uid 65534`);
    const fd = openSync(file, "r");
    try {
      store.saveTokens("a", tokens(A1));
      expect(statSync(file).uid).toBe(process.getuid?.());
      // The old file kept what it had: a descriptor on it never reads the new tokens.
      const buf = Buffer.alloc(4096);
      expect(buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString("utf8")).not.toContain(A1);
    } finally {
      closeSync(fd);
    }
  });

  it("regression: tokens are secrets for the scrubber, also the replaced ones (a late log line may still quote them)", () => {
    const store = new AuthStore(join(root, "auth"));
    const scrubber = new SecretScrubber(() => [], store);
    store.saveTokens("s", tokens(A1, R1));
    expect(scrubber.scrub(`Bearer ${A1} and ${R1}`)).toBe("Bearer *** and ***");
    store.saveTokens("s", tokens(A2));
    expect(scrubber.scrub(`${A1} ${A2} ${encodeURIComponent(R1)}`)).toBe("*** *** ***");
    store.saveRegistration("s", "i", { issuer: "i", clientId: "c", clientSecret: "cs_registeredsecret", redirectUris: [] });
    expect(scrubber.scrub("secret cs_registeredsecret")).toBe("secret ***");
  });
});

describe("the auth config", () => {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const pem = privateKey.export({ type: "pkcs8", format: "pem" }) as string;
  const env = { SECRET: "cs_live_Zk3qP9vX2mT7", KEY: pem };

  function load(entry: unknown) {
    return parseConfig(JSON.stringify({ mcpServers: { s: entry } }), "/c/config.json", env);
  }

  it("reads auth on an http server (variables expanded), masks its secret and key when printed and scrubs them", () => {
    const cfg = load({
      url: "https://mcp.example.com/mcp",
      auth: { clientId: "mcpd", clientSecret: "${SECRET}", scopes: "read write", redirectPort: 8976 },
    }).servers[0]!;
    expect(cfg.auth).toEqual({ clientId: "mcpd", clientSecret: env.SECRET, scopes: ["read", "write"], redirectPort: 8976 });
    expect(redactServerConfig(cfg).auth).toEqual({ clientId: "mcpd", clientSecret: "***", scopes: ["read", "write"], redirectPort: 8976 });
    expect(new SecretScrubber(() => [cfg]).scrub(`secret ${env.SECRET}`)).toBe("secret ***");
    const jwt = load({ url: "https://m.example.com/mcp", auth: { grant: "client_credentials", clientId: "bot", privateKey: "${KEY}" } })
      .servers[0]!;
    const line = pem.split("\n")[1] as string;
    expect(new SecretScrubber(() => [jwt]).scrub(`key line ${line}`)).toBe("key line ***");
    expect(redactServerConfig(jwt).auth).toMatchObject({ privateKey: "***" });
  });

  it("changes the transport hash only when auth is there (tool caches keep their keys)", () => {
    const plain = load({ url: "https://mcp.example.com/mcp" }).servers[0]!;
    const withAuth = load({ url: "https://mcp.example.com/mcp", auth: { clientId: "x" } }).servers[0]!;
    expect(withAuth.transportHash).not.toBe(plain.transportHash);
    expect(plain.auth).toBeUndefined();
  });

  it.each([
    [{ auth: { grant: "password" } }, /"grant" must be "authorization_code" or "client_credentials"/],
    [{ auth: { grant: "client_credentials", clientId: "x" } }, /needs "clientId" and one of "clientSecret"/],
    [{ auth: { clientSecret: "${SECRET}" } }, /needs the "clientId" it belongs to/],
    [{ auth: { clientId: "x", privateKey: "not a key" } }, /"privateKey" is not a PEM private key/],
    [{ auth: { clientMetadataUrl: "http://x.example.com/c.json" } }, /"clientMetadataUrl" must be an https URL with a path/],
    [{ auth: { redirectPort: 70000 } }, /"redirectPort" must be a port number/],
    [{ auth: { clientId: "x" }, headers: { Authorization: "Bearer y" } }, /both an "Authorization" header and "auth"/],
    [{ auth: "yes" }, /"auth" must be an object/],
  ])("refuses %j with a clear error", (extra, message) => {
    expect(() => load({ url: "https://mcp.example.com/mcp", ...extra })).toThrow(message);
  });

  it("never quotes a secret in an error", () => {
    expect(() => load({ url: "https://m.example.com/mcp", auth: { clientId: "x", clientSecret: 12345678 } })).toThrow(/a number/);
    expect(() =>
      load({ url: "https://m.example.com/mcp", auth: { clientId: "x", clientSecret: "${SECRET}", privateKey: "${SECRET}" } }),
    ).toThrow(expect.objectContaining({ code: "MCPD_CONFIG_INVALID", message: expect.not.stringContaining(env.SECRET) }));
  });

  it("OAuth applies to http and sse servers, unless auth is false or an Authorization header is configured", () => {
    const apply = (entry: unknown) => oauthApplies(load(entry).servers[0]!);
    expect(apply({ url: "https://m.example.com/mcp" })).toBe(true);
    expect(apply({ type: "sse", url: "https://m.example.com/sse" })).toBe(true);
    expect(apply({ url: "https://m.example.com/mcp", auth: false })).toBe(false);
    expect(apply({ url: "https://m.example.com/mcp", headers: { authorization: "Bearer x" } })).toBe(false);
    expect(apply({ url: "wss://m.example.com/mcp" })).toBe(false);
    expect(apply({ command: "x" })).toBe(false);
  });
});
