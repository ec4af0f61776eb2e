import { describe, expect, it } from "vitest";
import { LIST_METHODS, MCP_METHODS, type McpMethodInfo, hasCapability, inEra, mcpMethod, targetOf } from "../src/mcp-methods.js";

const rows = Object.entries(MCP_METHODS) as Array<[string, McpMethodInfo]>;

describe("MCP_METHODS: every MCP method declared once", () => {
  it("holds the 2026-07-28 wire exactly: its requests and notifications, and none the revision removed", () => {
    const modern = rows.filter(([, r]) => r.eras.includes("2026")).map(([m]) => m);
    expect(modern.sort()).toEqual(
      [
        "completion/complete",
        "notifications/cancelled",
        "notifications/message",
        "notifications/progress",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
        "prompts/get",
        "prompts/list",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "server/discover",
        "subscriptions/listen",
        "tools/call",
        "tools/list",
      ].sort(),
    );
    for (const gone of ["initialize", "ping", "logging/setLevel", "resources/subscribe", "roots/list", "sampling/createMessage"]) {
      expect(inEra(gone, "2026"), gone).toBe(false);
      expect(inEra(gone, "2025"), gone).toBe(true);
    }
  });

  it("in 2026 servers send no requests: what 2025 servers asked travels as an input request", () => {
    const serverRequests = rows.filter(([, r]) => r.from === "server" && r.kind === "request");
    expect(serverRequests.map(([m]) => m).sort()).toEqual(["elicitation/create", "roots/list", "sampling/createMessage"]);
    for (const [m, r] of serverRequests) {
      expect(r.eras, m).toEqual(["2025"]);
      expect(r.inputRequest, m).toBe(true);
    }
  });

  it("input_required only on tools/call, prompts/get and resources/read; cache fields on the lists, read and discover", () => {
    expect(rows.filter(([, r]) => r.inputRequired).map(([m]) => m)).toEqual(["tools/call", "prompts/get", "resources/read"]);
    expect(
      rows
        .filter(([, r]) => r.cacheable)
        .map(([m]) => m)
        .sort(),
    ).toEqual(["prompts/list", "resources/list", "resources/read", "resources/templates/list", "server/discover", "tools/list"]);
  });

  it("each list method's row says its key and item, and LIST_METHODS points back at it", () => {
    for (const [item, method] of Object.entries(LIST_METHODS)) {
      const list = mcpMethod(method)?.list;
      expect(list?.item, method).toBe(item);
      expect(list?.paginated, method).toBe(true);
    }
    expect(mcpMethod("resources/templates/list")?.list?.key).toBe("resourceTemplates");
  });

  it("listen-only notifications name the filter field that opts in", () => {
    expect(MCP_METHODS["notifications/tools/list_changed"].listenFilter).toBe("toolsListChanged");
    expect(MCP_METHODS["notifications/resources/updated"].listenFilter).toBe("resourceSubscriptions");
  });

  it("knows nothing of a method it does not declare", () => {
    expect(mcpMethod("tools/explode")).toBeUndefined();
    expect(mcpMethod("constructor")).toBeUndefined();
    expect(inEra("toString", "2025")).toBe(false);
  });
});

describe("targetOf", () => {
  it.each<[string, Record<string, unknown> | undefined, unknown]>([
    ["tools/call", { name: "echo", arguments: {} }, { kind: "tool", name: "echo" }],
    ["prompts/get", { name: "greet" }, { kind: "prompt", name: "greet" }],
    ["resources/read", { uri: "ui://app/index.html" }, { kind: "resource", name: "ui://app/index.html" }],
    ["resources/subscribe", { uri: "file:///a" }, { kind: "resource", name: "file:///a" }],
    ["completion/complete", { ref: { type: "ref/prompt", name: "greet" } }, { kind: "prompt", name: "greet" }],
    ["completion/complete", { ref: { type: "ref/resource", uri: "file:///{x}" } }, { kind: "resourceTemplate", name: "file:///{x}" }],
    ["completion/complete", { ref: { type: "ref/other", name: "x" } }, undefined],
    ["completion/complete", { ref: "greet" }, undefined],
    ["tools/call", { name: 7 }, undefined],
    ["tools/call", undefined, undefined],
    ["tools/list", {}, undefined],
    ["unknown/method", { name: "x" }, undefined],
  ])("%s %j", (method, params, expected) => {
    expect(targetOf(method, params as never)).toEqual(expected);
  });
});

describe("hasCapability", () => {
  it("reads the capability path the table names on the side that must declare it", () => {
    expect(hasCapability("tools/call", "server", { tools: {} })).toBe(true);
    expect(hasCapability("tools/call", "server", { prompts: {} })).toBe(false);
    expect(hasCapability("resources/subscribe", "server", { resources: {} })).toBe(false);
    expect(hasCapability("resources/subscribe", "server", { resources: { subscribe: true } })).toBe(true);
    expect(hasCapability("resources/subscribe", "server", { resources: { subscribe: false } })).toBe(false);
    expect(hasCapability("sampling/createMessage", "client", { sampling: {} })).toBe(true);
    expect(hasCapability("sampling/createMessage", "client", undefined)).toBe(false);
    // A method that needs nothing, or whose capability is the other side's, needs nothing of this side.
    expect(hasCapability("server/discover", "server", undefined)).toBe(true);
    expect(hasCapability("sampling/createMessage", "server", undefined)).toBe(true);
  });
});
