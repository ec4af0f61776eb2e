/**
 * Profiles on the HTTP front end: `/profiles/NAME/mcp` (and `/profiles/NAME/sse`) serve the aggregate view
 * through that profile of the config, exactly as `mcpd connect --profile NAME` does on the socket.
 */
import { writeFileSync } from "node:fs";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestDaemon, fixture, startTestDaemon, until } from "../e2e/harness.js";
import { type HttpFrontInfo, httpFront, post, sdkClient } from "./http-harness.js";

const servers = { fx: fixture("fx"), other: fixture("other") };
let d: TestDaemon;
let front: HttpFrontInfo;

beforeAll(async () => {
  d = await startTestDaemon(servers, {
    settings: { profiles: { coding: { servers: ["fx"], tools: { include: ["fx__echo", "fx__add"] } } } },
  });
  front = await httpFront(d);
});
afterAll(async () => {
  await d?.stop();
});

describe.each(["streamable", "sse"] as const)("/profiles/NAME over %s", (kind) => {
  it("lists only what the profile selects and refuses the rest naming the profile", async () => {
    const { client } = await sdkClient(front, kind, "/profiles/coding/mcp");
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["fx__add", "fx__echo"]);
      const r = await client.callTool({ name: "fx__echo", arguments: { text: "in profile" } });
      expect((r.content as Array<{ text: string }>)[0]?.text).toBe("in profile");
      const refused = await client.callTool({ name: "other__echo", arguments: { text: "x" } }).catch((e: Error & { code?: number }) => e);
      expect(refused).toBeInstanceOf(Error);
      expect((refused as { code?: number }).code).toBe(-32075);
      expect((refused as Error).message).toMatch(/coding/);
    } finally {
      await client.close();
    }
  });
});

describe("profiles over HTTP", () => {
  it("an unknown profile is 404 naming the profiles that exist", async () => {
    const r = await post(front, "/profiles/nope/mcp", {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    });
    expect(r.status).toBe(404);
    const body = await r.json();
    expect(body.error.data.mcpdCode).toBe("MCPD_UNKNOWN_PROFILE");
    expect(body.error.message).toMatch(/coding/);
  });

  it("status shows the session's profile, and a reload that changes it notifies that session", async () => {
    const { client } = await sdkClient(front, "streamable", "/profiles/coding/mcp");
    const { client: plain } = await sdkClient(front, "streamable", "/mcp");
    try {
      let changed = 0;
      let plainChanged = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changed++;
      });
      plain.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        plainChanged++;
      });
      const c = await d.control();
      const st = (await c.request("mcpd/status")).result;
      expect(st.clients.find((cl: any) => cl.face === "http" && cl.profile === "coding")).toBeDefined();
      writeFileSync(
        d.configFile,
        JSON.stringify({ mcpd: { profiles: { coding: { servers: ["fx"], tools: { include: ["fx__echo"] } } } }, mcpServers: servers }),
      );
      await c.request("mcpd/reload");
      await until(() => changed > 0, "tools/list_changed for the profile's session");
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["fx__echo"]);
      // The session without a profile saw no change of its view: nothing was sent to it.
      await plain.ping();
      expect(plainChanged).toBe(0);
      c.close();
    } finally {
      await client.close();
      await plain.close();
    }
  });
});
