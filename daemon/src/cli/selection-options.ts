import type { ViewSelection } from "@mcpd/protocol/core";
import { UsageError, type OptionSpec, type ParsedCommand } from "./args.js";

/**
 * `--profile NAME`, `--tools GLOB[,GLOB]` (repeatable) and `--tool-search on|off|auto`, as `mcpd connect`
 * and `mcpd tools` take them.
 */
export const SELECTION_OPTIONS: Record<"profile" | "tools" | "tool-search", OptionSpec> = {
  profile: { type: "string", value: "NAME", description: "Only what this profile of the config (mcpd.profiles.NAME) selects" },
  tools: {
    type: "string",
    multiple: true,
    value: "GLOB[,GLOB]",
    description: "Only the tools these globs match, over the aggregate names (`github__*`, `*__search`); repeatable",
  },
  "tool-search": {
    type: "string",
    value: "on|off|auto",
    description:
      "Tool search (docs/tool-search.md): list search_tools and the tools found instead of every tool; auto: past the profile's threshold",
  },
};

/**
 * The selection the options ask for (`{}` when neither is given); the daemon checks that the profile
 * exists and that each glob is usable. `--tools a,b --tools c` is `["a", "b", "c"]`.
 * @throws UsageError for an empty `--profile`, or an empty glob in `--tools`.
 */
export function selectionOf(values: ParsedCommand["values"], command: string): ViewSelection {
  const out: ViewSelection = {};
  const profile = values.profile;
  if (profile !== undefined) {
    if (typeof profile !== "string" || profile === "") throw new UsageError("--profile needs a profile's name", command);
    out.profile = profile;
  }
  const raw = values.tools;
  if (raw !== undefined) {
    const globs = (Array.isArray(raw) ? raw : [String(raw)]).flatMap((v) => v.split(",")).map((g) => g.trim());
    if (globs.length === 0 || globs.some((g) => g === "")) {
      throw new UsageError(`--tools needs comma-separated globs such as "github__*,*__search", got ${JSON.stringify(raw)}`, command);
    }
    out.tools = globs;
  }
  const mode = values["tool-search"];
  if (mode !== undefined) {
    if (mode !== "on" && mode !== "off" && mode !== "auto")
      throw new UsageError(`--tool-search must be on, off or auto, got ${JSON.stringify(mode)}`, command);
    out.toolSearch = mode;
  }
  return out;
}
