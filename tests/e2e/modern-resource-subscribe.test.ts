/**
 * `resources/subscribe` from a 2025-era client to a 2026-era server (which has no such method: resource
 * updates come on a `subscriptions/listen` stream that names the URIs). Regression: mcpd refused it with
 * -32601 "resources/subscribe does not exist in MCP 2026-07-28" (conformance 2025-11-25 resources-subscribe
 * and resources-unsubscribe through mcpd); now the URI joins the one listen stream mcpd keeps to the server,
 * and the server's updates reach the subscriber.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CONFORMANCE_FIXTURE } from "../conformance/server-scenarios.js";
import { type RawClient, startTestDaemon, type TestDaemon } from "./harness.js";

let daemon: TestDaemon | undefined;
let client: RawClient | undefined;

afterEach(async () => {
  client?.close();
  client = undefined;
  await daemon?.stop();
  daemon = undefined;
});

const URI = "test://watched-resource";
const updates = (r: RawClient) => r.messages.filter((m) => m.method === "notifications/resources/updated" && m.params?.uri === URI);

describe("resources/subscribe from a 2025-era client to a 2026-era server", () => {
  it("subscribes through the server's listen stream: its update reaches the subscriber, and none after unsubscribe (regression: -32601)", async () => {
    // The fixture serves both eras: mcpd's probe finds it 2026-era.
    daemon = await startTestDaemon({ cf: { command: process.execPath, args: [CONFORMANCE_FIXTURE, "--stdio"] } });
    const r = (client = await daemon.raw());
    expect((await r.request("mcpd/select", { server: "cf" })).error).toBeUndefined();
    await r.initialize();
    expect(await r.request("resources/subscribe", { uri: URI })).toMatchObject({ result: {} });

    expect((await r.request("tools/call", { name: "test_touch_watched_resource", arguments: {} })).result?.content?.[0]?.text).toBe(
      `${URI} updated`,
    );
    const update = await r.waitFor((m) => m.method === "notifications/resources/updated", "the resource's update");
    expect(update.params).toEqual({ uri: URI });

    expect(await r.request("resources/unsubscribe", { uri: URI })).toMatchObject({ result: {} });
    await r.request("tools/call", { name: "test_touch_watched_resource", arguments: {} });
    // A later request's answer comes after any update the server sent before it (one ordered stream).
    await r.request("tools/list", {});
    expect(updates(r)).toHaveLength(1);
  });
});
