import { describe, expect, it } from "vitest";
import { isFrontEndUrl, mcpdEndpoints, SELF_REFERENCE, selfReference } from "../../src/config-import/self-reference.js";
import type { ServerEntry } from "../../src/config-import/import-types.js";

const DEFAULT = mcpdEndpoints(undefined, {});

describe("selfReference: entries that point back at mcpd", () => {
  it("regression: `mcpd connect` however it is started is mcpd itself", () => {
    const self: ServerEntry[] = [
      { command: "mcpd", args: ["connect"] },
      { command: "mcpd", args: ["connect", "github", "--no-autostart"] },
      { command: "/usr/local/bin/mcpd", args: ["connect"] },
      { command: "C:\\tools\\mcpd.cmd", args: ["connect"] },
      { command: "npx", args: ["mcpd", "connect"] },
      { command: "npx", args: ["-y", "--", "mcpd@0.1.0", "connect"] },
      { command: "npx", args: ["--package", "x", "@scope/mcpd@latest", "connect"] },
      { command: "pnpm", args: ["dlx", "mcpd", "connect"] },
      { command: "npm", args: ["exec", "--yes", "mcpd", "connect"] },
      { command: "bunx", args: ["mcpd", "connect"] },
      { command: "node", args: ["/opt/mcpd/daemon/bin/mcpd.js", "connect"] },
      { command: "/usr/bin/node", args: ["--no-warnings", "-r", "x.cjs", "./bin/mcpd.js", "connect"] },
    ];
    for (const e of self) expect(selfReference(e, DEFAULT), JSON.stringify(e)).toBe(`${SELF_REFERENCE} (it runs \`mcpd connect\`)`);
  });

  it("other commands, and mcpd commands other than connect, are not", () => {
    const others: ServerEntry[] = [
      { command: "mcpd", args: ["status"] },
      { command: "mcpd-tools", args: ["connect"] },
      { command: "npx", args: ["-y", "mcpd-server", "connect"] },
      { command: "npx", args: ["-y", "@modelcontextprotocol/server-github"] },
      { command: "node", args: ["server.js", "mcpd", "connect"] },
      { command: "npm", args: ["run", "mcpd", "connect"] },
      { command: "uvx", args: ["mcpd", "connect"] },
    ];
    for (const e of others) expect(selfReference(e, DEFAULT), JSON.stringify(e)).toBeUndefined();
  });

  it("regression: URLs of the front end (loopback, the configured port, /mcp /sse /servers/NAME/mcp|sse) are mcpd itself, as an entry's url or a bridge's argument", () => {
    const urls = [
      "http://127.0.0.1:7767/mcp",
      "http://localhost:7767/mcp/",
      "http://LOCALHOST:7767/sse",
      "http://[::1]:7767/servers/github/mcp",
      "http://127.0.0.2:7767/servers/a-b_c/sse",
      "http://0.0.0.0:7767/mcp",
      "https://localhost:7767/mcp",
    ];
    for (const url of urls) {
      expect(isFrontEndUrl(url, DEFAULT), url).toBe(true);
      expect(selfReference({ type: "http", url }, DEFAULT)).toBe(`${SELF_REFERENCE} (${url} is mcpd's HTTP front end)`);
      expect(selfReference({ type: "sse", url }, DEFAULT)).toMatch(/^points back at mcpd itself/);
    }
    expect(selfReference({ command: "npx", args: ["-y", "mcp-remote", "http://127.0.0.1:7767/mcp"] }, DEFAULT)).toBe(
      `${SELF_REFERENCE} (its argument http://127.0.0.1:7767/mcp is mcpd's HTTP front end)`,
    );
    const others = [
      "http://127.0.0.1:7768/mcp",
      "http://localhost:3000/mcp",
      "http://127.0.0.1:7767/api/mcp",
      "http://127.0.0.1:7767/messages",
      "http://127.0.0.1:7767/servers/x/y/mcp",
      "http://example.com:7767/mcp",
      "http://10.0.0.5:7767/mcp",
      "ws://localhost:7767/mcp",
      "http://localhost/mcp",
      "not a url",
    ];
    for (const url of others) expect(isFrontEndUrl(url, DEFAULT), url).toBe(false);
    expect(selfReference({ type: "ws", url: "ws://127.0.0.1:7767/mcp" }, DEFAULT)).toBeUndefined();
  });

  it("the port and host come from mcpd.http and MCPD_HTTP_PORT; port 0 (any) names none", () => {
    expect(DEFAULT).toEqual({ ports: [7767], hosts: [] });
    expect(mcpdEndpoints({ http: { port: 9000 } }, {})).toEqual({ ports: [9000], hosts: [] });
    expect(mcpdEndpoints({ http: { port: 0 } }, {})).toEqual({ ports: [], hosts: [] });
    expect(mcpdEndpoints({ http: { port: 9000 } }, { MCPD_HTTP_PORT: "8123" }).ports).toEqual([9000, 8123]);
    expect(mcpdEndpoints(undefined, { MCPD_HTTP_PORT: "0" }).ports).toEqual([7767]);
    const remote = mcpdEndpoints({ http: { host: "192.168.1.5", allowRemote: true } }, {});
    expect(isFrontEndUrl("http://192.168.1.5:7767/mcp", remote)).toBe(true);
    expect(isFrontEndUrl("http://192.168.1.5:7767/mcp", DEFAULT)).toBe(false);
    const v6 = mcpdEndpoints({ http: { host: "[FD00::1]" } }, {});
    expect(isFrontEndUrl("http://[fd00::1]:7767/sse", v6)).toBe(true);
    expect(isFrontEndUrl("http://127.0.0.1:7767/mcp", mcpdEndpoints({ http: { port: 0 } }, {}))).toBe(false);
  });

  it("a URL's credentials are not shown in the reason", () => {
    const reason = selfReference({ type: "http", url: "http://user:s3cret@127.0.0.1:7767/mcp" }, DEFAULT);
    expect(reason).toMatch(/^points back at mcpd itself/);
    expect(reason).not.toContain("s3cret");
  });
});
