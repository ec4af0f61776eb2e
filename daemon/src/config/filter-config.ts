import { CONFIG_DEFAULTS } from "../defaults.js";
import type { ItemFilters, ProfileSpec } from "./config-schema.js";
import { FILTER_KINDS, PROFILE_NAME_PATTERN } from "./config-schema.js";
import { describeValue, isPlainObject, type ConfigIssues } from "./config-issues.js";
import { suggestKey } from "./did-you-mean.js";
import { ProfileSchema } from "./config-file-schema.js";
import { readWithSchema } from "./read-with-schema.js";
import { readToolSearch } from "./tool-search-setting.js";

/** What each kind's globs are matched against, for messages. */
const MATCHED: Readonly<Record<(typeof FILTER_KINDS)[number], string>> = {
  tools: "tool names",
  prompts: "prompt names",
  resources: "resource URIs",
};

/**
 * The `tools`, `prompts` and `resources` filters of a server entry or a profile as the schema read them
 * (`prefix` is "" or `profiles.<name>.`), finished: an empty `include` is warned of, repeated globs
 * dropped. Undefined when none is given.
 */
export function finishItemFilters(read: ItemFilters, prefix: string, where: string, issues: ConfigIssues): ItemFilters | undefined {
  const out: { -readonly [K in keyof ItemFilters]: ItemFilters[K] } = {};
  for (const kind of FILTER_KINDS) {
    const spec = read[kind];
    if (spec === undefined) continue;
    if (spec.include?.length === 0) issues.warn(where, `"${prefix}${kind}.include" is empty: nothing is included, so every item is hidden`);
    const dedupe = (list: readonly string[] | undefined) => (list === undefined ? undefined : [...new Set(list)]);
    const include = dedupe(spec.include);
    const exclude = dedupe(spec.exclude);
    if (include === undefined && exclude === undefined) continue;
    out[kind] = { ...(include ? { include } : {}), ...(exclude ? { exclude } : {}) };
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Reads `mcpd.profiles`: `{ "<name>": { "servers": [...], "tools": {...}, "prompts": {...}, "resources": {...} } }`.
 * Names follow {@link PROFILE_NAME_PATTERN}; `servers` must name configured servers (`serverNames`: every
 * name the file defines, valid or not, so one broken server entry is reported once).
 */
export function readProfiles(
  value: unknown,
  serverNames: readonly string[],
  issues: ConfigIssues,
): Record<string, ProfileSpec> | undefined {
  if (value === undefined) return undefined;
  const where = `"mcpd.profiles"`;
  if (!isPlainObject(value)) {
    issues.error(
      where,
      `must be an object mapping profile names to profiles such as {"coding": {"servers": ["github"]}}, got ${describeValue(value)}`,
    );
    return undefined;
  }
  const names = Object.keys(value);
  if (names.length > CONFIG_DEFAULTS.maxProfiles) {
    issues.error(where, `has ${names.length} profiles, more than the ${CONFIG_DEFAULTS.maxProfiles} allowed`);
    return undefined;
  }
  const out: Record<string, ProfileSpec> = {};
  for (const name of names) {
    const at = `profile "${name}"`;
    if (!PROFILE_NAME_PATTERN.test(name)) {
      issues.error(at, `invalid name: use 1 to 48 letters, digits, "_" or "-"`);
      continue;
    }
    const before = issues.errors.length;
    const read = readWithSchema(ProfileSchema, value[name], { issues, where: at, prefix: "" });
    if (read === undefined) continue;
    const profile: { -readonly [K in keyof ProfileSpec]: ProfileSpec[K] } = { ...finishItemFilters(read, "", at, issues) };
    if (read.servers !== undefined) {
      const servers = read.servers;
      for (const s of servers) {
        if (serverNames.includes(s)) continue;
        const close = suggestKey(s, serverNames);
        const hint = close !== undefined ? ` (did you mean "${close}"?)` : "";
        const listed = serverNames.length > 20 ? `${serverNames.slice(0, 20).join(", ")}, ...` : serverNames.join(", ") || "(none)";
        issues.error(at, `"servers" names "${s}", which is not a configured server${hint}; configured: ${listed}`);
      }
      if (servers.length === 0) issues.warn(at, `"servers" is empty: the profile sees no server at all`);
      profile.servers = [...new Set(servers)];
    }
    if (read.toolSearch !== undefined) profile.toolSearch = readToolSearch(read.toolSearch, at, issues);
    if (issues.errors.length === before) out[name] = profile;
  }
  return out;
}

/** A profile's or server filter's glob that matches nothing, as a warning's sentence. */
export function unmatchedGlobWarning(
  owner: string,
  kind: (typeof FILTER_KINDS)[number],
  list: "include" | "exclude",
  glob: string,
  among: number,
): string {
  return `${owner}: ${kind}.${list} glob ${JSON.stringify(glob)} matches none of the ${among} ${MATCHED[kind]} offered now`;
}
