import { describe, expect, it } from "vitest";
import { relayedCapabilities } from "../../src/supervision/relayed-capabilities.js";

const MCPD = { roots: { listChanged: true }, sampling: {}, elicitation: {} };

describe("relayedCapabilities (a per-client server's private session)", () => {
  it("declares the client's own sampling, elicitation and extensions (unknown ones untouched), its roots or mcpd's", () => {
    const client = {
      sampling: { tools: {} },
      elicitation: { form: {}, url: {} },
      roots: { listChanged: false },
      extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] }, "example.com/other": { x: 1 } },
    };
    expect(relayedCapabilities(MCPD, client)).toEqual(client);
  });

  it("claims nothing the client did not declare beyond roots, which mcpd answers with the configured ones", () => {
    expect(relayedCapabilities(MCPD, {})).toEqual({ roots: { listChanged: true } });
    expect(relayedCapabilities(MCPD, { experimental: { x: {} }, extensions: "no" } as never)).toEqual({ roots: { listChanged: true } });
  });
});
