import type { Tool } from "@mcpd/protocol";
import { describe, expect, it } from "vitest";
import type { CatalogEntry } from "../../../src/router/catalog.js";
import { ToolIndex, searchTerm } from "../../../src/router/tool-search/tool-index.js";
import { nameWords, oneLine, toolDocument } from "../../../src/router/tool-search/tool-words.js";

function entry(server: string, name: string, description: string, properties: Record<string, unknown> = {}): CatalogEntry<Tool> {
  return { server, exposed: `${server}__${name}`, item: { name, description, inputSchema: { type: "object", properties } } };
}

describe("tool words", () => {
  it("split names on case, _, -, . and /", () => {
    expect(nameWords("getFileInfo")).toEqual(["get", "file", "info"]);
    expect(nameWords("HTTPServer_list-items.v2")).toEqual(["http", "server", "list", "items", "v2"]);
    expect(nameWords("API-post-search")).toEqual(["api", "post", "search"]);
  });

  it("read parameter names and descriptions, and cut a description to its first sentence", () => {
    const doc = toolDocument(
      "k__kubectl_get",
      "k",
      entry("k", "kubectl_get", "Get resources.", { resourceType: { description: "Pods or nodes" } }).item,
    );
    expect(doc.name).toBe("kubectl get");
    expect(doc.params).toBe("resource type Pods or nodes");
    expect(oneLine("First sentence. Second one.", 100)).toBe("First sentence.");
    expect(oneLine("x".repeat(50), 10)).toBe(`${"x".repeat(9)}…`);
  });

  it("index terms lower-cased and singular, without stop words", () => {
    expect(searchTerm("Files")).toBe("file");
    expect(searchTerm("queries")).toBe("query");
    expect(searchTerm("the")).toBeNull();
    expect(searchTerm("status")).toBe("status");
  });
});

describe("ToolIndex", () => {
  const list = [
    entry("github", "create_issue", "Create a new issue in a GitHub repository"),
    entry("github", "merge_pull_request", "Merge a pull request"),
    entry("k8s", "kubectl_logs", "Get logs from Kubernetes pods", { podName: { description: "The pod" } }),
    entry("fs", "read_file", "Read a file"),
  ];

  it("ranks by name, description and parameters, with prefix and one-typo matches", () => {
    const index = new ToolIndex(() => list);
    expect(index.search("merge the pull request", { limit: 3 })[0]?.exposed).toBe("github__merge_pull_request");
    expect(index.search("show logs of a pod", { limit: 3 })[0]?.exposed).toBe("k8s__kubectl_logs");
    expect(index.search("kube", { limit: 3 })[0]?.exposed).toBe("k8s__kubectl_logs");
    expect(index.search("isssue", { limit: 3 })[0]?.exposed).toBe("github__create_issue");
  });

  it("searches one server, or only what a view allows, and at most limit hits", () => {
    const index = new ToolIndex(() => list);
    expect(index.search("read file issue logs", { limit: 10, server: "fs" }).map((h) => h.exposed)).toEqual(["fs__read_file"]);
    const allowed = index.search("read file issue logs", { limit: 10, allows: (server) => server !== "github" });
    expect(allowed.map((h) => h.server).sort()).toEqual(["fs", "k8s"]);
    expect(index.search("read file issue logs", { limit: 1 })).toHaveLength(1);
  });

  it("follows the catalog's list: a new list re-indexes only the tools that changed, and drops those gone", () => {
    let current = list;
    const index = new ToolIndex(() => current);
    expect(index.sync()).toBe(4);
    expect(index.sync()).toBe(0);
    current = [...list.slice(1), entry("fs", "read_file", "Read an image as base64"), entry("db", "query", "Run SQL")];
    current = current.filter((e) => e.exposed !== "fs__read_file" || e.item.description === "Read an image as base64");
    expect(index.sync()).toBe(3); // create_issue gone, read_file changed, db__query new
    expect(index.size).toBe(4);
    expect(index.search("create issue", { limit: 5 }).map((h) => h.exposed)).not.toContain("github__create_issue");
    expect(index.search("base64 image", { limit: 1 })[0]?.exposed).toBe("fs__read_file");
    expect(index.search("sql", { limit: 1 })[0]?.exposed).toBe("db__query");
  });
});
