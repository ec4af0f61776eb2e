import { PROTOCOL_DEFAULTS, quote } from "@mcpd/protocol";
import { CONFIG_DEFAULTS } from "../defaults.js";
import type { ItemFilters, NameFilterSpec, ProfileSpec } from "./config-schema.js";
import { FILTER_KINDS, PROFILE_KEYS, PROFILE_NAME_PATTERN } from "./config-schema.js";
import { describeValue, isPlainObject, type ConfigIssues } from "./config-issues.js";
import { hintFor, suggestKey } from "./did-you-mean.js";
import { globProblem } from "./globs.js";
import { readToolSearch } from "./tool-search-setting.js";

/** Keys of a filter object. */
const FILTER_KEYS = ["include", "exclude"] as const;

/** What each kind's globs are matched against, for messages. */
const MATCHED: Readonly<Record<(typeof FILTER_KINDS)[number], string>> = {
  tools: "tool names",
  prompts: "prompt names",
  resources: "resource URIs",
};

/**
 * Reads one `{"include": [...], "exclude": [...]}` filter at `label` (`"tools"`, `"profiles.coding.tools"`).
 * Bad values are reported to `issues` and left out; returns undefined when nothing usable was given.
 */
function readNameFilter(value: unknown, label: string, where: string, issues: ConfigIssues): NameFilterSpec | undefined {
  if (!isPlainObject(value)) {
    issues.error(
      where,
      `"${label}" must be an object such as {"include": ["search_*"], "exclude": ["delete_*"]}, got ${describeValue(value)}`,
    );
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!(FILTER_KEYS as readonly string[]).includes(key)) {
      issues.warn(where, `unknown key "${label}.${key}" ignored${hintFor(key, FILTER_KEYS, { allow: "include", deny: "exclude" })}`);
    }
  }
  const out: { include?: string[]; exclude?: string[] } = {};
  for (const key of FILTER_KEYS) {
    const list = value[key];
    if (list === undefined) continue;
    const at = `${label}.${key}`;
    if (!Array.isArray(list) || list.some((g) => typeof g !== "string")) {
      issues.error(where, `"${at}" must be an array of glob strings such as ["github__*"], got ${describeValue(list)}`);
      continue;
    }
    if (list.length > CONFIG_DEFAULTS.maxGlobsPerList) {
      issues.error(where, `"${at}" has ${list.length} globs, more than the ${CONFIG_DEFAULTS.maxGlobsPerList} allowed`);
      continue;
    }
    let ok = true;
    list.forEach((glob: string, i) => {
      const problem =
        glob.length > CONFIG_DEFAULTS.maxGlobChars ? `longer than ${CONFIG_DEFAULTS.maxGlobChars} characters` : globProblem(glob);
      if (problem !== undefined) {
        issues.error(
          where,
          `"${at}[${i}]" ${JSON.stringify(quote(glob, PROTOCOL_DEFAULTS.quotedGlobChars))} is not a usable glob: ${problem}`,
        );
        ok = false;
      }
    });
    if (!ok) continue;
    if (key === "include" && list.length === 0) issues.warn(where, `"${at}" is empty: nothing is included, so every item is hidden`);
    out[key] = [...new Set(list as string[])];
  }
  return out.include === undefined && out.exclude === undefined ? undefined : out;
}

/**
 * Reads the `tools`, `prompts` and `resources` filters of a server entry or a profile (`prefix` is ""
 * or `profiles.<name>.`). Only kinds given and valid are in the result; undefined when none is.
 */
export function readItemFilters(
  raw: Record<string, unknown>,
  prefix: string,
  where: string,
  issues: ConfigIssues,
): ItemFilters | undefined {
  const out: { -readonly [K in keyof ItemFilters]: ItemFilters[K] } = {};
  for (const kind of FILTER_KINDS) {
    if (raw[kind] === undefined) continue;
    const spec = readNameFilter(raw[kind], `${prefix}${kind}`, where, issues);
    if (spec) out[kind] = spec;
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
    const raw = value[name];
    if (!isPlainObject(raw)) {
      issues.error(at, `must be an object such as {"servers": ["github"], "tools": {"include": ["github__*"]}}, got ${describeValue(raw)}`);
      continue;
    }
    for (const key of Object.keys(raw)) {
      if (!(PROFILE_KEYS as readonly string[]).includes(key)) issues.warn(at, `unknown key "${key}" ignored${hintFor(key, PROFILE_KEYS)}`);
    }
    const before = issues.errors.length;
    const profile: { -readonly [K in keyof ProfileSpec]: ProfileSpec[K] } = { ...readItemFilters(raw, "", at, issues) };
    if (raw.servers !== undefined) {
      const servers = raw.servers;
      if (!Array.isArray(servers) || servers.some((s) => typeof s !== "string")) {
        issues.error(at, `"servers" must be an array of configured server names, got ${describeValue(servers)}`);
      } else {
        for (const s of servers as string[]) {
          if (serverNames.includes(s)) continue;
          const close = suggestKey(s, serverNames);
          const hint = close !== undefined ? ` (did you mean "${close}"?)` : "";
          const listed = serverNames.length > 20 ? `${serverNames.slice(0, 20).join(", ")}, ...` : serverNames.join(", ") || "(none)";
          issues.error(at, `"servers" names "${s}", which is not a configured server${hint}; configured: ${listed}`);
        }
        if (servers.length === 0) issues.warn(at, `"servers" is empty: the profile sees no server at all`);
        profile.servers = [...new Set(servers as string[])];
      }
    }
    if (raw.toolSearch !== undefined) profile.toolSearch = readToolSearch(raw.toolSearch, at, issues);
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
