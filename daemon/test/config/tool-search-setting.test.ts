/** A profile's `toolSearch`: a mode or `{mode, autoThreshold, callTool}`, checked with errors naming the profile and the value. */
import { describe, expect, it } from "vitest";
import type { ConfigError } from "@mcpd/protocol";
import { parseConfig } from "../../src/config/index.js";

const FILE = "/cfg/config.json";
const parse = (profiles: unknown) =>
  parseConfig(JSON.stringify({ mcpd: { profiles }, mcpServers: { a: { command: "node" } } }), FILE, { HOME: "/home/u" });

function errorsOf(profiles: unknown): string[] {
  try {
    parse(profiles);
  } catch (err) {
    return (err as ConfigError).message.split("\n").filter((l) => l.startsWith(FILE));
  }
  return [];
}

describe("a profile's toolSearch", () => {
  it("is a mode, or an object with a mode, an auto threshold and call_tool", () => {
    const cfg = parse({ s: { toolSearch: "on" }, t: { toolSearch: { mode: "auto", autoThreshold: 60, callTool: true } } });
    expect(cfg.settings.profiles).toEqual({
      s: { toolSearch: { mode: "on" } },
      t: { toolSearch: { mode: "auto", autoThreshold: 60, callTool: true } },
    });
    expect(cfg.warnings).toEqual([]);
    expect(parse({ u: { toolSearch: { mode: "off", callTols: true } } }).warnings).toEqual([
      `${FILE}: profile "u": unknown key "toolSearch.callTols" ignored (did you mean "callTool"?)`,
    ]);
  });

  it("refuses another mode, a bad threshold or callTool, naming the profile and the value", () => {
    expect(errorsOf({ s: { toolSearch: "yes" } })).toEqual([
      `${FILE}: profile "s": "toolSearch" must be one of "off", "on", "auto" or {"mode": "auto", "autoThreshold": 100, "callTool": true}, got "yes"`,
    ]);
    expect(errorsOf({ s: { toolSearch: { mode: "auto", autoThreshold: -1 } } })).toEqual([
      `${FILE}: profile "s": "toolSearch.autoThreshold" must be a whole number of tools (default 100), got -1`,
    ]);
    expect(errorsOf({ s: { toolSearch: { mode: "on", callTool: "yes" } } })).toEqual([
      `${FILE}: profile "s": "toolSearch.callTool" must be true or false, got "yes"`,
    ]);
  });
});
