import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpdError, type Logger } from "@mcpd/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { bearerDigest } from "../../src/http/http-guard.js";
import { routeOf } from "../../src/http/http-routes.js";
import { ScopedTokenStore } from "../../src/http/scoped-tokens.js";
import { scopeAllows } from "../../src/http/token-scope.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmpFile = (): string => {
  const d = mkdtempSync(join(tmpdir(), "mcpd-scoped-"));
  dirs.push(d);
  return join(d, "http-tokens.json");
};

/** A logger that keeps its warnings. */
function recorder(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const log = {
    warnings,
    trace: () => {},
    debug: () => {},
    info: () => {},
    warn: (_o: object, msg?: string) => void warnings.push(msg ?? ""),
    error: (_o: object, msg?: string) => void warnings.push(msg ?? ""),
    child: () => log,
  };
  return log as unknown as Logger & { warnings: string[] };
}

const bearer = (token: string): Buffer | undefined => bearerDigest(`Bearer ${token}`);

describe("the scoped token store", () => {
  it("keeps digests, never tokens, in a 0600 file, and finds each token again after a restart", () => {
    const file = tmpFile();
    const a = new ScopedTokenStore(file, 4, recorder());
    const p = a.issue({ kind: "profile", name: "coding" });
    const s = a.issue({ kind: "server", name: "fx" });
    expect(p.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain(p.token);
    expect(text).not.toContain(s.token);
    const b = new ScopedTokenStore(file, 4, recorder());
    expect(b.match(bearer(p.token))?.scope).toEqual({ kind: "profile", name: "coding" });
    expect(b.match(bearer(s.token))?.id).toBe(s.entry.id);
    expect(b.match(bearer("x".repeat(43)))).toBeUndefined();
    expect(b.match(undefined)).toBeUndefined();
    b.revoke(p.entry.id);
    expect(new ScopedTokenStore(file, 4, recorder()).match(bearer(p.token))).toBeUndefined();
  });

  it("is bounded: one past the bound is refused with MCPD_HTTP_TOKEN_LIMIT; an unknown id with MCPD_UNKNOWN_HTTP_TOKEN", () => {
    const store = new ScopedTokenStore(tmpFile(), 2, recorder());
    store.issue({ kind: "server", name: "a" });
    store.issue({ kind: "server", name: "a" });
    const over = (() => {
      try {
        store.issue({ kind: "server", name: "a" });
      } catch (err) {
        return err as McpdError;
      }
    })();
    expect(over).toBeInstanceOf(McpdError);
    expect(over?.code).toBe("MCPD_HTTP_TOKEN_LIMIT");
    expect(over?.wireCode).toBe(-32602);
    expect(() => store.revoke("nope")).toThrow(/Unknown HTTP token id "nope"/);
  });

  it("ignores a file others could read or write, a symbolic link, or one that is not what mcpd writes: no token opens anything", () => {
    const file = tmpFile();
    const issued = new ScopedTokenStore(file, 4, recorder()).issue({ kind: "server", name: "fx" });
    chmodSync(file, 0o644);
    let log = recorder();
    expect(new ScopedTokenStore(file, 4, log).match(bearer(issued.token))).toBeUndefined();
    expect(log.warnings.join()).toMatch(/not a private regular file/);
    chmodSync(file, 0o600);
    const link = `${file}.link`;
    symlinkSync(file, link);
    expect(new ScopedTokenStore(link, 4, recorder()).list()).toEqual([]);
    writeFileSync(file, "{ not json", { mode: 0o600 });
    log = recorder();
    expect(new ScopedTokenStore(file, 4, log).list()).toEqual([]);
    expect(log.warnings.join()).toMatch(/not what mcpd writes/);
    const good = { id: "0123456789ab", scope: { kind: "profile", name: "p" }, createdAt: "t", sha256: "ab".repeat(32) };
    const bad = [
      { ...good, id: "x" },
      { ...good, id: "0123456789ac", scope: { kind: "tool", name: "p" } },
      { ...good, sha256: "zz" },
    ];
    writeFileSync(file, JSON.stringify({ version: 1, tokens: [good, ...bad] }), { mode: 0o600 });
    expect(new ScopedTokenStore(file, 4, recorder()).list().map((t) => t.id)).toEqual([good.id]);
  });
});

describe("what a scope opens", () => {
  const profile = { kind: "profile", name: "coding" } as const;
  const server = { kind: "server", name: "fx" } as const;
  it("only its own endpoints, in every transport's form; nothing else, including paths that are no endpoint", () => {
    for (const path of ["/profiles/coding/mcp", "/profiles/coding/sse", "/profiles/coding/messages", "/profiles/coding/mcp/"])
      expect(scopeAllows(profile, routeOf(path)), path).toBe(true);
    for (const path of ["/servers/fx/mcp", "/servers/fx/sse", "/servers/fx/messages"])
      expect(scopeAllows(server, routeOf(path)), path).toBe(true);
    const others = [
      "/mcp",
      "/sse",
      "/messages",
      "/profiles/ops/mcp",
      "/servers/coding/mcp",
      "/profiles/fx/mcp",
      "/status",
      "/",
      "/metrics",
    ];
    for (const path of others) {
      expect(scopeAllows(profile, routeOf(path)), path).toBe(false);
      expect(scopeAllows(server, routeOf(path)), path).toBe(false);
    }
  });
});
