import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bearerMatches, checkHostAndOrigin, hostOf, LOOPBACK_NAMES, tokenDigest } from "../../src/http/http-guard.js";
import { routeOf } from "../../src/http/http-routes.js";
import { loadOrCreateToken } from "../../src/http/http-token.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), "mcpd-token-"));
  dirs.push(d);
  return d;
};

describe("the front end's token file", () => {
  it("is created 0600 with a 256-bit random token, and kept across starts", () => {
    const file = join(tmp(), "http-token");
    const a = loadOrCreateToken(file);
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadOrCreateToken(file)).toBe(a);
  });

  it("is replaced when others could read it, when it is malformed, or when it is a symbolic link", () => {
    const dir = tmp();
    const file = join(dir, "http-token");
    const a = loadOrCreateToken(file);
    chmodSync(file, 0o644);
    const b = loadOrCreateToken(file);
    expect(b).not.toBe(a);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    writeFileSync(file, "short\n", { mode: 0o600 });
    expect(loadOrCreateToken(file)).not.toBe("short");
    rmSync(file);
    const elsewhere = join(dir, "elsewhere");
    writeFileSync(elsewhere, `${"x".repeat(43)}\n`, { mode: 0o600 });
    symlinkSync(elsewhere, file);
    const c = loadOrCreateToken(file);
    expect(c).not.toBe("x".repeat(43));
    expect(readFileSync(elsewhere, "utf8")).toBe(`${"x".repeat(43)}\n`);
  });
});

describe("bearer and Host/Origin checks", () => {
  const allowed = new Set(LOOPBACK_NAMES);
  it("matches only `Bearer <token>` exactly", () => {
    expect(bearerMatches("Bearer abc", tokenDigest("abc"))).toBe(true);
    expect(bearerMatches("bearer abc", tokenDigest("abc"))).toBe(true);
    for (const h of [undefined, "", "Bearer", "Bearer abcd", "Bearer ab", "Basic abc", "Bearer abc def"])
      expect(bearerMatches(h, tokenDigest("abc"))).toBe(false);
  });
  it("reads host names out of Host headers, IPv6 included", () => {
    expect(hostOf("localhost:7767")).toBe("localhost");
    expect(hostOf("[::1]:7767")).toBe("[::1]");
    expect(hostOf("[::1]")).toBe("[::1]");
    expect(hostOf("127.0.0.1")).toBe("127.0.0.1");
    expect(hostOf("a:b")).toBeUndefined();
    expect(hostOf("[::1")).toBeUndefined();
  });
  it("accepts loopback names and refuses others, in Host and in Origin", () => {
    expect(checkHostAndOrigin("127.0.0.1:1", undefined, allowed)).toBeUndefined();
    expect(checkHostAndOrigin("localhost:1", "http://localhost:3000", allowed)).toBeUndefined();
    expect(checkHostAndOrigin(undefined, undefined, allowed)).toMatch(/no Host/);
    expect(checkHostAndOrigin("evil.com", undefined, allowed)).toMatch(/Host "evil.com"/);
    expect(checkHostAndOrigin("localhost", "http://evil.com", allowed)).toMatch(/Origin/);
    expect(checkHostAndOrigin("localhost", "null", allowed)).toMatch(/Origin/);
    expect(checkHostAndOrigin("mybox.local:1", undefined, new Set([...LOOPBACK_NAMES, "mybox.local"]))).toBeUndefined();
  });
});

describe("routes", () => {
  it("maps the endpoints and nothing else", () => {
    expect(routeOf("/mcp")).toEqual({ kind: "streamable", path: "/mcp", view: {} });
    expect(routeOf("/mcp/")).toEqual({ kind: "streamable", path: "/mcp", view: {} });
    expect(routeOf("/profiles/coding/mcp")).toEqual({ kind: "streamable", path: "/profiles/coding/mcp", view: { profile: "coding" } });
    expect(routeOf("/servers/my%20fs/mcp")).toEqual({ kind: "streamable", path: "/servers/my%20fs/mcp", view: { server: "my fs" } });
    expect(routeOf("/sse")).toEqual({ kind: "legacy-stream", view: {}, messagesPath: "/messages" });
    expect(routeOf("/servers/fx/messages")).toEqual({ kind: "legacy-post", view: { server: "fx" }, path: "/servers/fx/messages" });
    for (const p of ["/", "/mcpx", "/servers/fx", "/servers/%E0%A4%A/mcp", "/servers/a/b/mcp"]) expect(routeOf(p), p).toBeUndefined();
  });
});
