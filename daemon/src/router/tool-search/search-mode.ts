import type { ToolSearchMode } from "../../config/config-schema.js";
import { CONFIG_DEFAULTS } from "../../defaults.js";
import type { ViewFilter } from "../view-filter.js";

/** Whether a view is in search mode now, whether it lists `call_tool`, and why (for `mcpd tools` and logs). */
export interface SearchModeState {
  on: boolean;
  callTool: boolean;
  reason: string;
}

/**
 * The search mode of a connection's view: the mode its selection asked for (`mcpd connect --tool-search`,
 * an HTTP `/search/` endpoint), else its profile's `toolSearch`, else off. `auto` is on while the view
 * would list more tools (`viewTools()`, counted only then) than the profile's `autoThreshold`.
 */
export function searchMode(selected: ToolSearchMode | undefined, filter: ViewFilter | undefined, viewTools: () => number): SearchModeState {
  const setting = filter?.profile?.spec.toolSearch;
  const mode = selected ?? setting?.mode ?? CONFIG_DEFAULTS.toolSearch.mode;
  const callTool = setting?.callTool ?? CONFIG_DEFAULTS.toolSearch.callTool;
  const source =
    selected !== undefined ? "asked by the connection" : setting !== undefined ? `profile "${filter?.profileName}"` : "the default";
  if (mode !== "auto") return { on: mode === "on", callTool, reason: `${mode} (${source})` };
  const threshold = setting?.autoThreshold ?? CONFIG_DEFAULTS.toolSearch.autoThreshold;
  const n = viewTools();
  const on = n > threshold;
  return { on, callTool, reason: `auto (${source}): ${n} tools ${on ? ">" : "<="} ${threshold}, search mode ${on ? "on" : "off"}` };
}
