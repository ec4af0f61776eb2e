/**
 * The one `subscriptions/listen` stream mcpd keeps to a 2026 server, with a real HTTP transport and a
 * scripted 2026 server that records every listen it holds open: `resources/subscribe` and `unsubscribe`
 * each replace the stream by one with the new URIs (the old one closed once the new one is acknowledged),
 * so the server holds one stream at a time, and its updates reach the session without the stream's
 * `subscriptionId` or its request as their context.
 */
import { createServer, type ServerResponse, type Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { JsonObject } from "@mcpd/protocol";
import { createTransport } from "@mcpd/transports";
import { waitFor } from "../../../tests/helpers/process.js";
import { UpstreamClient } from "../../src/supervision/upstream-client.js";

const SUB = "io.modelcontextprotocol/subscriptionId";

const clients: UpstreamClient[] = [];
const servers: Server[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((done) => s.close(done));
  }
});

interface Listen {
  id: number;
  uris: string[];
  res: ServerResponse;
  open: boolean;
}

const sse = (res: ServerResponse, message: object): void => {
  res.write(`data: ${JSON.stringify(message)}\n\n`);
};

/** A 2026 server whose resources can be subscribed to; `listens` are every listen it was sent. */
async function modernServer(): Promise<{ url: string; listens: Listen[] }> {
  const listens: Listen[] = [];
  const server = createServer(async (req, res) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    const msg = JSON.parse(text);
    if (msg.id === undefined) return res.writeHead(202).end();
    const reply = (result: JsonObject) =>
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }));
    if (msg.method === "server/discover")
      return reply({ resultType: "complete", supportedVersions: ["2026-07-28"], capabilities: { resources: { subscribe: true } } });
    if (msg.method === "resources/list") return reply({ resultType: "complete", resources: [] });
    if (msg.method === "resources/templates/list") return reply({ resultType: "complete", resourceTemplates: [] });
    if (msg.method !== "subscriptions/listen") return res.writeHead(404).end();
    const uris = msg.params.notifications.resourceSubscriptions ?? [];
    const listen: Listen = { id: msg.id, uris, res, open: true };
    listens.push(listen);
    req.socket.on("close", () => (listen.open = false));
    res.writeHead(200, { "content-type": "text/event-stream" });
    sse(res, {
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: { resourceSubscriptions: uris }, _meta: { [SUB]: msg.id } },
    });
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`, listens };
}

describe("the one subscriptions/listen stream to a 2026 server", () => {
  it("resources/subscribe and unsubscribe replace it by one with the new URIs; one is open at a time; updates come unstamped", async () => {
    const { url, listens } = await modernServer();
    const client = new UpstreamClient(createTransport({ type: "http", url }));
    clients.push(client);
    const updates: Array<{ params: JsonObject | undefined; context: JsonObject }> = [];
    client.on("notification", (method: string, params: JsonObject | undefined, context: JsonObject) => {
      if (method === "notifications/resources/updated") updates.push({ params, context });
    });
    await client.connect({ era: "2026", forced: true });
    expect(listens).toEqual([]);
    const open = () => listens.filter((l) => l.open).map((l) => l.uris);

    await client.request("resources/subscribe", { uri: "file:///a" });
    expect(open()).toEqual([["file:///a"]]);
    await client.request("resources/subscribe", { uri: "file:///b" });
    await waitFor(() => open().length === 1, { message: "the first stream closed" });
    expect(open()).toEqual([["file:///a", "file:///b"]]);

    const current = listens.find((l) => l.open) as Listen;
    sse(current.res, {
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri: "file:///b", _meta: { [SUB]: current.id } },
    });
    await waitFor(() => updates.length === 1, { message: "the update" });
    expect(updates[0]).toEqual({ params: { uri: "file:///b" }, context: {} });

    await client.request("resources/unsubscribe", { uri: "file:///a" });
    await waitFor(() => !current.open, { message: "the stream with both closed" });
    expect(open()).toEqual([["file:///b"]]);
    await client.request("resources/unsubscribe", { uri: "file:///b" });
    await waitFor(() => open().length === 0, { message: "no stream left" });
    expect(listens.map((l) => l.uris)).toEqual([["file:///a"], ["file:///a", "file:///b"], ["file:///b"]]);
  });
});
