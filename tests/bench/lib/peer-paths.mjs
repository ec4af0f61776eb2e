/**
 * How an agent reaches the fixture server on each row of the "peers" scenario, each opened the way a user
 * would, each exposing `call()` (one `tools/call` of the echo tool), `list()` (`tools/list`, checked to
 * name the tool) and `close()`. The peer worker (workers/peer-agent.mjs) imports this.
 *
 *   stdio         official SDK `Client` over `StdioClientTransport`, spawning the server itself (no relay)
 *   mcpd-connect  official SDK `Client` over `StdioClientTransport` running `mcpd connect <server>`
 *   mcpd-client   `@mcpd/client` `connect()`, `listTools({server})`, `callTool({server, ...})`
 *   streamable    official SDK `Client` over `StreamableHTTPClientTransport` to `url` (with `headers`):
 *                 mcpd's HTTP front end, mcp-proxy, supergateway
 *   sse           official SDK `Client` over `SSEClientTransport` to `url`: mcp-hub's aggregated endpoint
 *
 * spec: {kind, server: {command, args}, serverName, socketPath, url, headers, tool}
 */
import { MCPD_BIN } from "./env.mjs";

const CLIENT_INFO = { name: "mcpd-bench-peer", version: "1.0.0" };

/** Throws unless a tools/call result is the echo asked for: a benchmark must not count failures as calls. */
function check(result) {
  if (result?.isError || result?.content?.[0]?.text !== "hi")
    throw new Error(`unexpected tools/call result: ${JSON.stringify(result).slice(0, 200)}`);
}

function checkListed(names, tool) {
  if (!names.includes(tool)) throw new Error(`tools/list does not name ${tool}: ${names.slice(0, 10).join(", ")}`);
}

/** An SDK Client on `transport`, connected (initialize + initialized), with the three operations. */
async function sdkPath(transport, tool, close) {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const client = new Client(CLIENT_INFO);
  await client.connect(transport);
  const echo = { name: tool, arguments: { text: "hi" } };
  return {
    pids: transport.pid ? [transport.pid] : [],
    call: async () => check(await client.callTool(echo)),
    list: async () => {
      const names = [];
      let cursor;
      do {
        const page = await client.listTools(cursor ? { cursor } : {});
        names.push(...page.tools.map((t) => t.name));
        cursor = page.nextCursor;
      } while (cursor);
      checkListed(names, tool);
    },
    close: () => close(client),
  };
}

/** Opens one client on a row's path. @returns {pids, call(), list(), close()} */
export async function openPeerPath(spec) {
  const tool = spec.tool ?? "echo";
  switch (spec.kind) {
    case "stdio":
    case "mcpd-connect": {
      const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
      const params =
        spec.kind === "stdio"
          ? { command: spec.server.command, args: spec.server.args }
          : {
              command: process.execPath,
              args: [MCPD_BIN, "connect", spec.serverName, "--no-autostart"],
              env: { ...process.env, MCPD_SOCKET: spec.socketPath },
            };
      return sdkPath(new StdioClientTransport({ ...params, stderr: "ignore" }), tool, (c) => c.close());
    }
    case "streamable": {
      const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
      const transport = new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers ?? {} } });
      // DELETE ends the session on the relay (supergateway ends that session's server then), as a client leaving should.
      return sdkPath(transport, tool, async (c) => {
        await transport.terminateSession().catch(() => {});
        await c.close();
      });
    }
    case "sse": {
      const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
      const transport = new SSEClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers ?? {} } });
      return sdkPath(transport, tool, (c) => c.close());
    }
    case "mcpd-client": {
      const { connect } = await import("@mcpd/client");
      const client = await connect({ socketPath: spec.socketPath, reconnect: false, clientInfo: CLIENT_INFO });
      const server = spec.serverName;
      return {
        pids: [],
        call: async () => check(await client.callTool({ server, name: tool, arguments: { text: "hi" } })),
        list: async () =>
          checkListed(
            (await client.listTools({ server })).map((t) => t.name),
            tool,
          ),
        close: () => client.close(),
      };
    }
    default:
      throw new Error(`unknown path kind ${JSON.stringify(spec.kind)}`);
  }
}
