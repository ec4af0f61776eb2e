/**
 * The ways a client can reach one server, each opened the way a user would, each exposing `call()` (one
 * tiny `tools/call echo`) and `close()`. Workers import this; the harness only names the paths.
 *
 *   a    official SDK `Client` over `StdioClientTransport`, spawning the server itself (direct)
 *   b    mcpd's own `StdioTransport` (@mcpd/transports), spawning the server itself (direct)
 *   hop  (b) with a zero-work pass-through process between client and server: the floor of one extra hop
 *   c    `@mcpd/client` `connect()` + `callTool({server, name})` through a running daemon
 *   d    official SDK `Client` over `StdioClientTransport` running `mcpd connect <server>` (the bridge)
 *   d-st mcpd's `StdioTransport` running the same `mcpd connect <server>`: a reference, the bridge with a
 *        light client, so (d)'s extra latency splits into the bridge's hop and the SDK client's own cost
 *   e    official SDK `Client` over `StreamableHTTPClientTransport` to the daemon's own HTTP front end
 *        (`/servers/<server>/mcp`, the same transparent view as (d)), with the bearer token from its file
 *   e-ht mcpd's `HttpTransport` to the same endpoint as (e): a reference, the front end with a light client
 *   http-mcpd  mcpd's `HttpTransport` to a Streamable HTTP server
 *   http-sdk   official SDK `Client` over `StreamableHTTPClientTransport` to the same server
 */
import { readFileSync } from "node:fs";
import { MCPD_BIN, PASS_THROUGH } from "./env.mjs";

// Each path imports only what it uses: client processes start faster, and none pays for a library
// (the SDK and its zod schemas) it does not run.
const sdkClient = async () => (await import("@modelcontextprotocol/sdk/client/index.js")).Client;
const sdkStdio = async () => (await import("@modelcontextprotocol/sdk/client/stdio.js")).StdioClientTransport;
const sdkHttp = async () => (await import("@modelcontextprotocol/sdk/client/streamableHttp.js")).StreamableHTTPClientTransport;
const mcpdTransports = () => import("@mcpd/transports");

export const PATH_LABELS = {
  a: "(a) SDK Client, direct stdio",
  b: "(b) mcpd StdioTransport, direct",
  hop: "(b) + a zero-work pass-through process",
  c: "(c) @mcpd/client via mcpd",
  d: "(d) SDK Client via `mcpd connect`",
  "d-st": "(d) with mcpd's StdioTransport as the client (reference)",
  e: "(e) SDK Client via mcpd's HTTP front end",
  "e-ht": "(e) with mcpd's HttpTransport as the client (reference)",
  "http-sdk": "SDK StreamableHTTPClientTransport",
  "http-mcpd": "mcpd HttpTransport",
};

const CLIENT_INFO = { name: "mcpd-bench", version: "1.0.0" };
const ECHO = { name: "echo", arguments: { text: "hi" } };
const PROTOCOL_VERSION = "2025-11-25";

/** Whether @mcpd/transports exports HttpTransport (it was finished after this harness was written). */
export async function hasHttpTransport() {
  return typeof (await mcpdTransports()).HttpTransport === "function";
}

/** Throws unless a tools/call result is the echo we asked for: a benchmark must not count failures as calls. */
function check(result) {
  if (result?.isError || result?.content?.[0]?.text !== "hi")
    throw new Error(`unexpected tools/call result: ${JSON.stringify(result).slice(0, 200)}`);
}

async function initialize(transport) {
  await transport.request("initialize", { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO });
  await transport.notify("notifications/initialized");
}

/**
 * The `requestInit` that puts the daemon's bearer token (read from `tokenFile`, as a client configured from
 * `mcpd http` would send it) on every request of an SDK StreamableHTTPClientTransport.
 */
export function bearerInit(tokenFile) {
  const token = readFileSync(tokenFile, "utf8").trim();
  if (!token) throw new Error(`the token file ${tokenFile} is empty`);
  return { headers: { Authorization: `Bearer ${token}` } };
}

/** The command an MCP client runs for `mcpd connect <server>`, the bridge of paths (d) and (d-st). */
function bridgeCommand(spec) {
  return { command: process.execPath, args: [MCPD_BIN, "connect", spec.serverName, "--no-autostart"] };
}

function bridgeEnv(spec) {
  return { ...process.env, MCPD_SOCKET: spec.socketPath };
}

/**
 * Opens one client on a path.
 * @param spec {path, server: {command, args}, serverName, socketPath, url, tokenFile}
 * @returns {call(): Promise<void>, close(): Promise<void>, pids: number[]}
 */
export async function openPath(spec) {
  switch (spec.path) {
    case "a": {
      const [Client, StdioClientTransport] = await Promise.all([sdkClient(), sdkStdio()]);
      const transport = new StdioClientTransport({ command: spec.server.command, args: spec.server.args, stderr: "ignore" });
      const client = new Client(CLIENT_INFO);
      await client.connect(transport);
      return {
        pids: [transport.pid],
        call: async () => check(await client.callTool(ECHO)),
        close: () => client.close(),
      };
    }
    case "b":
    case "hop":
    case "d-st": {
      const { StdioTransport } = await mcpdTransports();
      const transport = new StdioTransport(
        spec.path === "b"
          ? { command: spec.server.command, args: spec.server.args }
          : spec.path === "hop"
            ? { command: process.execPath, args: [PASS_THROUGH, spec.server.command, ...spec.server.args] }
            : { ...bridgeCommand(spec), env: bridgeEnv(spec) },
      );
      await transport.connect();
      await initialize(transport);
      return {
        pids: [transport.pid],
        call: async () => check(await transport.request("tools/call", ECHO)),
        close: () => transport.close(),
      };
    }
    case "c": {
      const { connect } = await import("@mcpd/client");
      const client = await connect({ socketPath: spec.socketPath, reconnect: false, clientInfo: CLIENT_INFO });
      const server = spec.serverName;
      return {
        pids: [],
        call: async () => check(await client.callTool({ server, ...ECHO })),
        close: () => client.close(),
      };
    }
    case "d": {
      const [Client, StdioClientTransport] = await Promise.all([sdkClient(), sdkStdio()]);
      const transport = new StdioClientTransport({ ...bridgeCommand(spec), env: bridgeEnv(spec), stderr: "ignore" });
      const client = new Client(CLIENT_INFO);
      await client.connect(transport);
      return {
        pids: [transport.pid],
        call: async () => check(await client.callTool(ECHO)),
        close: () => client.close(),
      };
    }
    // (e), the daemon's HTTP front end (bearer token from its file), and a plain Streamable HTTP server.
    case "e":
    case "http-sdk": {
      const [Client, StreamableHTTPClientTransport] = await Promise.all([sdkClient(), sdkHttp()]);
      const options = spec.tokenFile ? { requestInit: bearerInit(spec.tokenFile) } : {};
      const transport = new StreamableHTTPClientTransport(new URL(spec.url), options);
      const client = new Client(CLIENT_INFO);
      await client.connect(transport);
      return {
        pids: [],
        call: async () => check(await client.callTool(ECHO)),
        // DELETE ends the server's session at once, as a well-behaved client does (else it idles out).
        close: async () => {
          await transport.terminateSession().catch(() => {});
          await client.close();
        },
      };
    }
    case "e-ht":
    case "http-mcpd": {
      const { HttpTransport } = await mcpdTransports();
      if (typeof HttpTransport !== "function") throw new Error("@mcpd/transports does not export HttpTransport");
      const transport = new HttpTransport({
        type: "http",
        url: spec.url,
        ...(spec.tokenFile ? { headers: bearerInit(spec.tokenFile).headers } : {}),
      });
      await transport.connect();
      await initialize(transport);
      return {
        pids: [],
        call: async () => check(await transport.request("tools/call", ECHO)),
        close: () => transport.close(),
      };
    }
    default:
      throw new Error(`unknown path ${JSON.stringify(spec.path)}`);
  }
}
