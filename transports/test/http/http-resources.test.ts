import { getEventListeners } from "node:events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TRANSPORT_DEFAULTS } from "../../src/defaults.js";
import { fixture, initialized } from "./http-helpers.js";

// Regression guard for the official SDK's Streamable HTTP client, which adds a listener per request to
// one shared AbortSignal and warns (MaxListenersExceededWarning) after ~1,500 requests.
describe("HttpTransport: resources stay bounded over many requests", () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => {
    warnings.push(w);
  };
  beforeEach(() => {
    warnings.length = 0;
    process.on("warning", onWarning);
  });
  afterEach(() => {
    process.off("warning", onWarning);
  });

  it("2,000 sequential requests sharing one caller signal: no listener growth, few sockets", async () => {
    const f = await fixture({ mode: "json" });
    const t = await initialized({ url: f.url });
    const shared = new AbortController();
    for (let i = 0; i < 2_000; i++) {
      await t.request("tools/call", { name: "echo", arguments: { text: String(i) } }, { signal: shared.signal });
    }
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(0);
    // Keep-alive: sequential requests reuse a connection; never more than the pool allows.
    expect(f.connections).toBeLessThanOrEqual(TRANSPORT_DEFAULTS.httpConnections);
    expect(f.openSockets.size).toBeLessThanOrEqual(TRANSPORT_DEFAULTS.httpConnections);
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
  });

  it("200 sequential SSE replies: no listener growth, few sockets", async () => {
    const f = await fixture({ mode: "sse" });
    const t = await initialized({ url: f.url });
    const shared = new AbortController();
    for (let i = 0; i < 200; i++) {
      await t.request("tools/call", { name: "progress", arguments: { steps: 1 }, _meta: { progressToken: i } }, { signal: shared.signal });
    }
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(0);
    expect(f.connections).toBeLessThanOrEqual(TRANSPORT_DEFAULTS.httpConnections);
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
  });
});
