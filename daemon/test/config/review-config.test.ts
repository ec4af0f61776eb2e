import { ConfigError } from "@mcpd/protocol";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";

const FILE = "/cfg/config.json";

/** The lines of the ConfigError that parsing `{"mcpServers": {"s": entry}}` throws. */
function errors(entry: unknown): string[] {
  try {
    parseConfig(JSON.stringify({ mcpServers: { s: entry } }), FILE, { HOME: "/home/ann" });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe("MCPD_CONFIG_INVALID");
    return (err as Error).message.split("\n");
  }
  throw new Error("expected a ConfigError");
}

describe("regression: config errors echoed secrets (they reach mcpd.log on reload)", () => {
  it.each([
    ["headers as a string", { url: "https://mcp.example.com/mcp", headers: "Authorization: Bearer SECRETSTR123" }, "headers", "a string"],
    ["env as a string", { command: "x", env: "API_TOKEN=SECRETSTR123" }, "env", "a string"],
    ["env as an array", { command: "x", env: ["API_TOKEN=SECRETSTR123"] }, "env", "an array"],
  ])("regression: %s is reported by its kind only", (_, entry, key, kind) => {
    const lines = errors(entry);
    expect(lines.join("\n")).not.toContain("SECRETSTR123");
    expect(lines).toContain(`${FILE}: server "s": "${key}" must be an object of string values, got ${kind}`);
  });

  it.each([
    ["args as a string", { command: "x", args: "--api-key SECRETSTR123" }, `"args" must be an array of strings, got a string`],
    ["an args item as an object", { command: "x", args: [{ token: "SECRETSTR123" }] }, `"args[0]" must be a string, got an object`],
  ])("regression: %s is reported by its kind only (its text was echoed)", (_, entry, said) => {
    const text = errors(entry).join("\n");
    expect(text).not.toContain("SECRETSTR123");
    expect(text).toContain(said);
  });

  it("an args item that is a number is still shown, with the fix", () => {
    expect(errors({ command: "x", args: [8080] }).join("\n")).toContain(`"args[0]" must be a string, got 8080 (write "8080")`);
  });

  it("regression: an invalid url is shown with its user, password and query masked", () => {
    const lines = errors({ url: "https://bob:hunter2SECRET@exa mple.com/mcp?token=QTOKEN123456" });
    const text = lines.join("\n");
    for (const secret of ["hunter2SECRET", "QTOKEN123456", "bob:"]) expect(text).not.toContain(secret);
    expect(text).toContain(`"url" is not a valid URL`);
    expect(text).toContain("exa mple.com/mcp");
  });
});

describe("regression: an invalid url with odd characters in its password", () => {
  it.each([
    ["https://bob:hunt er2SECRET@mcp example.com/mcp", "https://***@mcp example.com/mcp"],
    ["https://bob:a/b@c SECRETX@exa mple.com/x?q=1#frag", "https://***@exa mple.com/x?***"],
    ["//bob:hunter2SECRET@exa mple.com", "***@exa mple.com"],
  ])("regression: %s is shown as %s", (url, shown) => {
    const text = errors({ url }).join("\n");
    expect(text).toContain(`"url" is not a valid URL: ${JSON.stringify(shown)}`);
  });
});
