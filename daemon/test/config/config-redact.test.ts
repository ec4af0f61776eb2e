import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { redactServerConfig } from "../../src/config/redact-config.js";
import { redactArgs, redactUrl } from "../../src/secrets/index.js";

const env = { TOKEN: "ghp_abcdef123456" };

function resolved(entry: unknown) {
  return parseConfig(JSON.stringify({ mcpServers: { s: entry } }), "/c/config.json", env).servers[0]!;
}

describe("redactServerConfig", () => {
  it("masks env values, keeps their names and everything else, and leaves the original untouched", () => {
    const cfg = resolved({
      command: "npx",
      args: ["-y", "server-github"],
      env: { GITHUB_TOKEN: "${TOKEN}", LEVEL: "debug" },
      timeout: 5000,
    });
    const safe = redactServerConfig(cfg);
    expect(safe.transport).toEqual({
      type: "stdio",
      command: "npx",
      args: ["-y", "server-github"],
      env: { GITHUB_TOKEN: "***", LEVEL: "***" },
      timeout: 5000,
      envMode: "allowlist",
    });
    expect(safe.name).toBe("s");
    expect(safe.timeout).toBe(5000);
    expect(safe.hash).toBe(cfg.hash);
    expect(JSON.stringify(safe)).not.toContain("ghp_abcdef123456");
    expect((cfg.transport as { env: Record<string, string> }).env.GITHUB_TOKEN).toBe("ghp_abcdef123456");
  });

  it("masks header values and URL credentials of remote servers", () => {
    const cfg = resolved({
      type: "http",
      url: "https://user:pa55@api.example.com/mcp?api_key=k123&region=eu&access_token=t&sig=s",
      headers: { Authorization: "Bearer ${TOKEN}", "X-Team": "core" },
    });
    const safe = redactServerConfig(cfg);
    const t = safe.transport as { url: string; headers: Record<string, string> };
    expect(t.headers).toEqual({ Authorization: "***", "X-Team": "***" });
    expect(t.url).toBe("https://***:***@api.example.com/mcp?api_key=***&region=eu&access_token=***&sig=***");
    expect(JSON.stringify(safe)).not.toMatch(/pa55|k123|ghp_/);
  });

  it("accepts a bare transport config", () => {
    expect(redactServerConfig({ type: "ws", url: "wss://h/?token=x", headers: { A: "b" } })).toEqual({
      type: "ws",
      url: "wss://h/?token=***",
      headers: { A: "***" },
    });
    expect(redactServerConfig({ command: "x", env: { A: "b" } })).toEqual({ command: "x", env: { A: "***" } });
  });
});

describe("redactUrl", () => {
  it("prints a URL without credentials exactly as written", () => {
    expect(redactUrl("http://127.0.0.1:3001/mcp?x=1")).toBe("http://127.0.0.1:3001/mcp?x=1");
    expect(redactUrl("https://h/mcp")).toBe("https://h/mcp");
  });

  it("masks a user name without a password, and handles text that is not a URL", () => {
    expect(redactUrl("https://token123@h/")).toBe("https://***@h/");
    expect(redactUrl("//user:pw@host:bad port")).toBe("//***:***@host:bad port");
  });

  it("masks secret-looking parameters whatever their case", () => {
    expect(redactUrl("https://h/?Key=1&PASSWORD=2&auth=3&client_secret=4&page=5")).toBe(
      "https://h/?Key=***&PASSWORD=***&auth=***&client_secret=***&page=5",
    );
  });
});

describe("redactArgs", () => {
  it("masks --flag=value and the value after a secret flag, keeps the rest", () => {
    expect(redactArgs(["--token=abc", "--api-key", "k", "--port", "80", "-y", "pkg", "--password", "p", "TOKEN=x", "DEBUG=1"])).toEqual([
      "--token=***",
      "--api-key",
      "***",
      "--port",
      "80",
      "-y",
      "pkg",
      "--password",
      "***",
      "TOKEN=***",
      "DEBUG=1",
    ]);
  });

  it("masks credentials in URL arguments", () => {
    expect(redactArgs(["mcp-remote", "https://u:p@h/sse?token=t"])).toEqual(["mcp-remote", "https://***:***@h/sse?token=***"]);
  });
});
