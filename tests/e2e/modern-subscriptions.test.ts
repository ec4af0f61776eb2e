/**
 * Resource subscriptions of 2025-era clients to 2026-era servers (issue 32): `resources/subscribe` and
 * `unsubscribe` from the official v1 SDK Client (through `mcpd connect`) map onto the one
 * `subscriptions/listen` mcpd keeps per 2026 upstream (the official v2 SDK server with `legacy: "reject"`,
 * over stdio and over HTTP), and `notifications/resources/updated` reaches exactly the clients subscribed
 * to that resource. A 2026-era client's own `subscriptions/listen` naming a 2026 server's resource is
 * served the same way.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { fixturePath } from "../helpers/process.js";
import { connectCommand, startTestDaemon, until, type RawClient, type TestDaemon } from "./harness.js";
import { modernEnvelope } from "../helpers/modern.js";

const MODERN = fixturePath("modern-fixture.mjs");

let daemon: TestDaemon | undefined;
const clients: Client[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await daemon?.stop();
  daemon = undefined;
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await until(() => child.exitCode !== null || child.signalCode !== null, "HTTP fixture exit").catch(() => child.kill("SIGKILL"));
    }
  }
});

async function modernHttp(): Promise<string> {
  const child = spawn(process.execPath, [MODERN, "--http", "--name", "mh"], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  return until(() => /LISTENING (\S+)/.exec(out)?.[1], "modern HTTP fixture listening");
}

/** A v1 client through `mcpd connect`, with the URIs of the resources/updated it got, in order. */
async function subscriber(d: TestDaemon, name: string): Promise<{ client: Client; updates: string[] }> {
  const client = new Client({ name, version: "1.0.0" });
  clients.push(client);
  const updates: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
  });
  await client.connect(new StdioClientTransport(connectCommand(d)));
  return { client, updates };
}

const textOf = (r: any): string => r.content?.[0]?.text ?? "";

describe("resources/subscribe from 2025-era clients to 2026-era servers", () => {
  it("maps onto the server's one listen stream: each update reaches exactly the clients subscribed to it, unsubscribe stops it (stdio and HTTP)", async () => {
    const url = await modernHttp();
    const d = (daemon = await startTestDaemon({
      ms: { command: process.execPath, args: [MODERN, "--name", "ms"] },
      mh: { type: "http", url },
    }));
    const a = await subscriber(d, "a");
    const b = await subscriber(d, "b");
    await until(async () => (await a.client.listResources()).resources.length === 4, "both servers' resources listed");
    expect(a.client.getServerCapabilities()?.resources?.subscribe).toBe(true);
    const uris = (await a.client.listResources()).resources.map((r) => r.uri);
    for (const server of ["ms", "mh"]) {
      const readme = uris.find((u) => u.includes(server) && u.endsWith("fixture://modern/readme")) as string;
      const other = uris.find((u) => u.includes(server) && u.endsWith("fixture://modern/other")) as string;
      expect(readme, server).toBeDefined();
      const touch = async (uri: string) =>
        expect(textOf(await a.client.callTool({ name: `${server}__touch`, arguments: { uri } }))).toMatch(/^touched /);
      const [aSeen, bSeen] = [a.updates.length, b.updates.length];

      await a.client.subscribeResource({ uri: readme });
      await b.client.subscribeResource({ uri: other });
      // Updates of one server come in order on its one stream: a later update's arrival shows an earlier one was not sent.
      await touch("fixture://modern/readme");
      await touch("fixture://modern/other");
      await until(() => b.updates.length > bSeen, `${server}: b's update`);
      await until(() => a.updates.length > aSeen, `${server}: a's update`);
      expect(b.updates.slice(bSeen)).toEqual([other]);
      await touch("fixture://modern/readme");
      await until(() => a.updates.length > aSeen + 1, `${server}: a's second update`);
      expect(a.updates.slice(aSeen)).toEqual([readme, readme]);

      await a.client.unsubscribeResource({ uri: readme });
      await a.client.subscribeResource({ uri: other });
      await touch("fixture://modern/readme");
      await touch("fixture://modern/other");
      await until(() => a.updates.length > aSeen + 2 && b.updates.length > bSeen + 1, `${server}: both get the other's update`);
      expect(a.updates.slice(aSeen)).toEqual([readme, readme, other]);
      expect(b.updates.slice(bSeen)).toEqual([other, other]);
      await a.client.unsubscribeResource({ uri: other });
      await b.client.unsubscribeResource({ uri: other });
    }
  });
});

describe("a 2026-era client's subscriptions/listen naming a 2026 server's resource", () => {
  it("is honoured (the resource is subscribed on the server's one listen stream) and gets its updates, tagged with its own id", async () => {
    const d = (daemon = await startTestDaemon({ ms: { command: process.execPath, args: [MODERN, "--name", "ms"] } }));
    const envelope = modernEnvelope({}, "raw-listen");
    const raw: RawClient = await d.raw();
    const readme = await until(async () => {
      const listed = await raw.request("resources/list", { _meta: envelope });
      return (listed.result?.resources ?? []).map((r: any) => r.uri).find((u: string) => u.endsWith("fixture://modern/readme"));
    }, "ms's readme listed");
    raw.send({
      jsonrpc: "2.0",
      id: "listen-1",
      method: "subscriptions/listen",
      params: { _meta: envelope, notifications: { resourceSubscriptions: [readme] } },
    });
    const ack = await raw.waitFor((m) => m.method === "notifications/subscriptions/acknowledged", "the acknowledgement");
    expect(ack.params.notifications).toEqual({ resourceSubscriptions: [readme] });
    const touched = await raw.request("tools/call", { name: "ms__touch", arguments: { uri: "fixture://modern/readme" }, _meta: envelope });
    expect(textOf(touched.result)).toMatch(/^touched /);
    const updated = await raw.waitFor((m) => m.method === "notifications/resources/updated", "the update");
    expect(updated.params.uri).toBe(readme);
    expect(updated.params._meta["io.modelcontextprotocol/subscriptionId"]).toBe("listen-1");
  });
});
