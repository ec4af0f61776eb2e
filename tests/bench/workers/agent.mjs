#!/usr/bin/env node
/**
 * An agent process for the start-up and footprint scenarios: it connects to every server it is given and
 * lists every tool, then reports `{type: "listed", atMs, bootMs, tools, servers, pids}` on stdout, where
 * `atMs` is performance.now() (ms since this process started, Node's bootstrap included), `bootMs` the
 * same clock when this script's first line ran, `importedMs` when the client library was loaded and
 * `connectedMs` when every connection was initialized (mcpd modes). With `hold`, it then waits for stdin EOF before closing;
 * without, it closes at once. Libraries are imported after `bootMs` so their load time is counted.
 *
 * Modes
 *   direct       official SDK Client + StdioClientTransport per server, all started in parallel
 *   mcpd-client  @mcpd/client connect() + listTools() (one `mcpd/tools`) on a running daemon
 *   mcpd-sdk     official SDK Client over @mcpd/client's McpdTransport (aggregate view): connect + tools/list
 *   mcpd-connect official SDK Client over StdioClientTransport running `spec.bridge` (`mcpd connect`, the
 *                aggregate view): spawn the bridge + initialize + tools/list
 *   mcpd-http    official SDK Client over StreamableHTTPClientTransport to `spec.url` (the daemon's HTTP front
 *                end, aggregate view `/mcp`) with the bearer token read from `spec.tokenFile`: initialize +
 *                tools/list; the session is ended with DELETE on close
 */
const bootMs = performance.now();
const spec = JSON.parse(process.argv[2]);
const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
const closers = [];
const CLIENT_INFO = { name: "bench-agent", version: "1.0.0" };

async function listAllSdk(client) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

async function main() {
  let tools = 0;
  let servers = 0;
  let importedMs;
  let connectedMs;
  const pids = [];
  if (spec.mode === "direct") {
    const [{ Client }, { StdioClientTransport }] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      import("@modelcontextprotocol/sdk/client/stdio.js"),
    ]);
    importedMs = performance.now();
    const counts = await Promise.all(
      spec.servers.map(async (s) => {
        const transport = new StdioClientTransport({
          command: s.command,
          args: s.args,
          env: { ...process.env, ...s.env },
          stderr: "ignore",
        });
        const client = new Client(CLIENT_INFO);
        closers.push(() => client.close());
        await client.connect(transport);
        pids.push(transport.pid);
        return (await listAllSdk(client)).length;
      }),
    );
    tools = counts.reduce((a, b) => a + b, 0);
    servers = counts.length;
  } else if (spec.mode === "mcpd-client") {
    const { connect } = await import("@mcpd/client");
    importedMs = performance.now();
    const client = await connect({ socketPath: spec.socketPath, reconnect: false, clientInfo: CLIENT_INFO });
    connectedMs = performance.now();
    closers.push(() => client.close());
    const list = await client.listTools();
    tools = list.length;
    servers = new Set(list.map((t) => t.server)).size;
  } else if (spec.mode === "mcpd-sdk") {
    const [{ Client }, { McpdTransport }] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      import("@mcpd/client"),
    ]);
    importedMs = performance.now();
    const client = new Client(CLIENT_INFO);
    closers.push(() => client.close());
    await client.connect(new McpdTransport({ socketPath: spec.socketPath }));
    connectedMs = performance.now();
    const list = await listAllSdk(client);
    tools = list.length;
    // Aggregate names are <server>__<tool>.
    servers = new Set(list.map((t) => t.name.split("__")[0])).size;
  } else if (spec.mode === "mcpd-connect") {
    const [{ Client }, { StdioClientTransport }] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      import("@modelcontextprotocol/sdk/client/stdio.js"),
    ]);
    importedMs = performance.now();
    const transport = new StdioClientTransport({
      command: spec.bridge.command,
      args: spec.bridge.args,
      env: { ...process.env, ...spec.bridge.env },
      stderr: "ignore",
    });
    const client = new Client(CLIENT_INFO);
    closers.push(() => client.close());
    await client.connect(transport);
    connectedMs = performance.now();
    pids.push(transport.pid);
    const list = await listAllSdk(client);
    tools = list.length;
    servers = new Set(list.map((t) => t.name.split("__")[0])).size;
  } else if (spec.mode === "mcpd-http") {
    const [{ Client }, { StreamableHTTPClientTransport }, { readFileSync }] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
      import("node:fs"),
    ]);
    importedMs = performance.now();
    const token = readFileSync(spec.tokenFile, "utf8").trim();
    const transport = new StreamableHTTPClientTransport(new URL(spec.url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client(CLIENT_INFO);
    closers.push(async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    });
    await client.connect(transport);
    connectedMs = performance.now();
    const list = await listAllSdk(client);
    tools = list.length;
    servers = new Set(list.map((t) => t.name.split("__")[0])).size;
  } else {
    throw new Error(`unknown mode ${JSON.stringify(spec.mode)}`);
  }
  send({ type: "listed", atMs: performance.now(), bootMs, importedMs, connectedMs, tools, servers, pids });
  if (spec.hold) {
    process.stdin.resume();
    await new Promise((resolve) => process.stdin.once("end", resolve));
  }
  await Promise.allSettled(closers.map((c) => c()));
  process.exit(0);
}

main().catch(async (err) => {
  send({ type: "error", message: String(err?.stack ?? err) });
  await Promise.allSettled(closers.map((c) => c()));
  process.exit(1);
});
