/**
 * Resources in the aggregate view when servers share URIs (three instances of one server): every entry
 * must be addressable and readable per server. A URI only one server lists keeps its form; a URI several
 * servers list is listed once per server as `mcpd://<server>/<uri>`, and every entry carries
 * `_meta["mcpd/server"]`. Reads, subscriptions and templates follow the same scheme (docs/protocol.md).
 */
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { fixture, startTestDaemon, until, type RawClient, type TestDaemon, connectCommand } from "./harness.js";

let daemon: TestDaemon | undefined;
const sdkClients: Client[] = [];

afterEach(async () => {
  for (const c of sdkClients.splice(0)) await c.close().catch(() => {});
  await daemon?.stop();
  daemon = undefined;
});

const INSTANCES = ["r1", "r2", "r3"];

async function threeInstances(): Promise<{ d: TestDaemon; a: RawClient }> {
  const d = (daemon = await startTestDaemon({
    r1: fixture("r1", ["--tag-resources", "--resource", "fixture://only/r1"]),
    r2: fixture("r2", ["--tag-resources"]),
    r3: fixture("r3", ["--tag-resources"]),
  }));
  const a = await d.raw();
  await a.initialize();
  await until(async () => (await a.request("resources/list")).result.resources.length === 7, "the resources of all three instances");
  return { d, a };
}

const textOf = (r: any): string => r.result?.contents?.[0]?.text ?? JSON.stringify(r);

describe("aggregate resources shared by several servers", () => {
  it("lists every entry once per server with a distinct URI and its server, and reads each from its own server (bug: 21 entries, 7 distinct, unreadable per server)", async () => {
    const { a } = await threeInstances();
    const resources = (await a.request("resources/list")).result.resources;
    const uris = resources.map((r: any) => r.uri);
    expect(new Set(uris).size).toBe(7);
    // Unique to one server: kept as the server gave it.
    const only = resources.find((r: any) => r.uri === "fixture://only/r1");
    expect(only._meta["mcpd/server"]).toBe("r1");
    expect(textOf(await a.request("resources/read", { uri: "fixture://only/r1" }))).toBe("resource fixture://only/r1 from r1");
    for (const server of INSTANCES) {
      for (const name of ["one", "two"]) {
        const uri = `mcpd://${server}/fixture://static/${name}`;
        const entry = resources.find((r: any) => r.uri === uri);
        expect(entry, uri).toBeDefined();
        expect(entry._meta["mcpd/server"]).toBe(server);
        expect(entry.name).toBe(name);
        const read = await a.request("resources/read", { uri });
        expect(textOf(read)).toBe(`${name} from ${server}`);
        // The contents are addressed as the client asked.
        expect(read.result.contents[0].uri).toBe(uri);
      }
    }
    // Per-request routing reaches one server with the server's own URI.
    expect(textOf(await a.request("resources/read", { uri: "fixture://static/one", _meta: { "mcpd/server": "r3" } }))).toBe("one from r3");
  });

  it("refuses a plain URI that several servers list, naming the addressable forms, instead of guessing one", async () => {
    const { a } = await threeInstances();
    const r = await a.request("resources/read", { uri: "fixture://static/one" });
    expect(r.error?.code, JSON.stringify(r)).toBe(-32602);
    expect(r.error.data?.mcpdCode).toBe("MCPD_AMBIGUOUS_RESOURCE");
    for (const server of INSTANCES) expect(r.error.message).toContain(`mcpd://${server}/fixture://static/one`);
    const sub = await a.request("resources/subscribe", { uri: "fixture://static/one" });
    expect(sub.error?.data?.mcpdCode).toBe("MCPD_AMBIGUOUS_RESOURCE");
    const unknownServer = await a.request("resources/read", { uri: "mcpd://nosuch/fixture://static/one" });
    expect(unknownServer.error?.code).toBe(-32602);
  });

  it("lists shared templates per server and reads an expanded namespaced URI from its server", async () => {
    const { a } = await threeInstances();
    const templates = (await a.request("resources/templates/list")).result.resourceTemplates;
    expect(templates.map((t: any) => [t.uriTemplate, t._meta["mcpd/server"]])).toEqual(
      INSTANCES.map((s) => [`mcpd://${s}/fixture://items/{id}`, s]),
    );
    expect(textOf(await a.request("resources/read", { uri: "mcpd://r2/fixture://items/42" }))).toBe("item 42 from r2");
    // A plain URI several servers' templates match is ambiguous too.
    expect((await a.request("resources/read", { uri: "fixture://items/42" })).error?.data?.mcpdCode).toBe("MCPD_AMBIGUOUS_RESOURCE");
    const completion = await a.request("completion/complete", {
      ref: { type: "ref/resource", uri: "mcpd://r3/fixture://items/{id}" },
      argument: { name: "id", value: "a" },
    });
    expect(completion.result.completion.values).toEqual(["alpha", "beta"]);
  });

  it("subscribes to one server's copy by its namespaced URI: only that server is subscribed, and updates come back under that URI", async () => {
    const { a } = await threeInstances();
    const uri = "mcpd://r2/fixture://static/two";
    expect((await a.request("resources/subscribe", { uri })).result).toEqual({});
    const touch = async (server: string): Promise<string> =>
      (await a.request("tools/call", { name: `${server}__touch`, arguments: { uri: "fixture://static/two" } })).result.content[0].text;
    expect(await touch("r1")).toBe("not subscribed");
    expect(await touch("r2")).toBe("touched");
    const update = await a.waitFor((m) => m.method === "notifications/resources/updated", "resources/updated");
    expect(update.params.uri).toBe(uri);
    expect(update.params._meta["mcpd/server"]).toBe("r2");
    expect((await a.request("resources/unsubscribe", { uri })).result).toEqual({});
    await until(async () => (await touch("r2")) === "not subscribed", "r2 unsubscribed upstream");
  });

  it("gives the official SDK Client behind `mcpd connect` distinct, readable resources", async () => {
    const { d } = await threeInstances();
    const transport = new StdioClientTransport(connectCommand(d));
    const client = new Client({ name: "e2e", version: "1.0.0" });
    sdkClients.push(client);
    await client.connect(transport);
    const { resources } = await client.listResources();
    expect(new Set(resources.map((r) => r.uri)).size).toBe(7);
    const read = await client.readResource({ uri: "mcpd://r3/fixture://static/one" });
    expect((read.contents[0] as { text: string }).text).toBe("one from r3");
  });
});
