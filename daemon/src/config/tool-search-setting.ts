import { CONFIG_DEFAULTS } from "../defaults.js";
import { TOOL_SEARCH_MODES, type ToolSearchMode, type ToolSearchSetting } from "./config-schema.js";
import { describeValue, isPlainObject, type ConfigIssues } from "./config-issues.js";
import { hintFor } from "./did-you-mean.js";

const KEYS = ["mode", "autoThreshold", "callTool"] as const;

/** Whether `value` is a tool-search mode (`off`, `on`, `auto`). */
export function isToolSearchMode(value: unknown): value is ToolSearchMode {
  return typeof value === "string" && (TOOL_SEARCH_MODES as readonly string[]).includes(value);
}

/**
 * Reads a profile's `toolSearch` (`at`: the profile, for messages): a mode (`"on"`, `"off"`, `"auto"`) or
 * `{"mode": ..., "autoThreshold": N, "callTool": true}`. A bad value is an error (the setting is left out).
 */
export function readToolSearch(value: unknown, at: string, issues: ConfigIssues): ToolSearchSetting | undefined {
  const modes = TOOL_SEARCH_MODES.map((m) => `"${m}"`).join(", ");
  if (isToolSearchMode(value)) return { mode: value };
  if (!isPlainObject(value)) {
    issues.error(
      at,
      `"toolSearch" must be one of ${modes} or {"mode": "auto", "autoThreshold": 100, "callTool": true}, got ${describeValue(value)}`,
    );
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!(KEYS as readonly string[]).includes(key)) issues.warn(at, `unknown key "toolSearch.${key}" ignored${hintFor(key, KEYS)}`);
  }
  const { mode, autoThreshold, callTool } = value;
  if (!isToolSearchMode(mode)) {
    issues.error(at, `"toolSearch.mode" must be one of ${modes}, got ${describeValue(mode)}`);
    return undefined;
  }
  if (autoThreshold !== undefined && (!Number.isInteger(autoThreshold) || (autoThreshold as number) < 0)) {
    issues.error(
      at,
      `"toolSearch.autoThreshold" must be a whole number of tools (default ${CONFIG_DEFAULTS.toolSearch.autoThreshold}), got ${describeValue(autoThreshold)}`,
    );
    return undefined;
  }
  if (callTool !== undefined && typeof callTool !== "boolean") {
    issues.error(at, `"toolSearch.callTool" must be true or false, got ${describeValue(callTool)}`);
    return undefined;
  }
  return {
    mode,
    ...(autoThreshold !== undefined ? { autoThreshold: autoThreshold as number } : {}),
    ...(callTool !== undefined ? { callTool } : {}),
  };
}
