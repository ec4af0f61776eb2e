import { describe, expect, it } from "vitest";
import { diffConfigs } from "../../src/config/diff-configs.js";
import { emptyConfig, parseConfig } from "../../src/config/parse-config.js";

const parse = (servers: Record<string, unknown>) => parseConfig(JSON.stringify({ mcpServers: servers }), "/c/config.json", {});

describe("diffConfigs", () => {
  it("sorts servers into added, removed, changed and unchanged by name and hash", () => {
    const before = parse({ keep: { command: "a" }, edit: { command: "b" }, gone: { command: "c" }, toggle: { command: "d" } });
    const after = parse({
      fresh: { url: "http://h/mcp" },
      toggle: { command: "d", enabled: false },
      edit: { command: "b", args: ["--new"] },
      keep: { args: [], command: "a" },
    });
    expect(diffConfigs(before, after)).toEqual({ added: ["fresh"], removed: ["gone"], changed: ["toggle", "edit"], unchanged: ["keep"] });
  });

  it("counts a change of an mcpd key (not only the transport) as changed", () => {
    const diff = diffConfigs(parse({ s: { command: "a" } }), parse({ s: { command: "a", maxConcurrency: 2 } }));
    expect(diff.changed).toEqual(["s"]);
  });

  it("works from and to an empty config, and on bare server lists", () => {
    const cfg = parse({ a: { command: "a" }, b: { command: "b" } });
    expect(diffConfigs(emptyConfig("/c/config.json"), cfg)).toEqual({ added: ["a", "b"], removed: [], changed: [], unchanged: [] });
    expect(diffConfigs(cfg.servers, [])).toEqual({ added: [], removed: ["a", "b"], changed: [], unchanged: [] });
    expect(diffConfigs(cfg, cfg)).toEqual({ added: [], removed: [], changed: [], unchanged: ["a", "b"] });
  });
});
