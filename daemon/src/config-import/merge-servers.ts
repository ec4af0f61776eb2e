import type { FoundServer, ServerEntry } from "./import-types.js";

/** What happened to one imported server. */
export interface MergeOutcome {
  name: string;
  origin: string;
  /**
   * `added`: new in mcpd's config. `identical`: already there, the same. `skipped`: there (or imported
   * earlier in this run) with a different definition; left alone.
   */
  action: "added" | "identical" | "skipped";
  reason?: string;
  notes: string[];
  /** For `added`: the entry as written into mcpd's config. */
  entry?: ServerEntry;
}

/** The result of {@link mergeServers}: the new config document and one outcome per server. */
export interface MergeResult {
  config: Record<string, unknown>;
  outcomes: MergeOutcome[];
}

/** The parts of an entry that decide which server it is, with defaults filled in, as canonical JSON. */
function canonical(entry: unknown): string {
  const e = (typeof entry === "object" && entry !== null ? entry : {}) as Record<string, unknown>;
  const type = e.type ?? (typeof e.command === "string" ? "stdio" : "http");
  const shape: Record<string, unknown> = { type };
  if (type === "stdio") {
    shape.command = e.command;
    shape.args = Array.isArray(e.args) ? e.args : [];
    shape.env = sortKeys(e.env);
    shape.cwd = e.cwd ?? null;
  } else {
    shape.url = e.url;
    shape.headers = sortKeys(e.headers);
  }
  shape.enabled = e.enabled !== false && e.disabled !== true;
  return JSON.stringify(shape);
}

function sortKeys(value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null) return {};
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function serversOf(config: Record<string, unknown>, key: "mcpServers" | "servers"): Record<string, unknown> {
  const v = config[key];
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * Merges found servers into mcpd's config document (never mutated; a copy is returned). New names go
 * under `mcpServers`. A name already configured (under `mcpServers` or `servers`) is never overwritten:
 * an identical definition is reported as such, a different one is skipped with a reason. Of two found
 * servers with one name, the first wins.
 * @throws Error when the config's `mcpServers` exists but is not an object (nothing sensible to merge into).
 */
export function mergeServers(config: Record<string, unknown>, found: FoundServer[]): MergeResult {
  if (
    config.mcpServers !== undefined &&
    (typeof config.mcpServers !== "object" || config.mcpServers === null || Array.isArray(config.mcpServers))
  ) {
    throw new Error('the mcpd config\'s "mcpServers" is not an object');
  }
  const existing = { ...serversOf(config, "servers"), ...serversOf(config, "mcpServers") };
  const target: Record<string, unknown> = { ...serversOf(config, "mcpServers") };
  const addedFrom = new Map<string, FoundServer>();
  const outcomes: MergeOutcome[] = [];
  for (const s of found) {
    const base = { name: s.name, origin: s.origin, notes: s.notes };
    if (Object.hasOwn(existing, s.name)) {
      if (canonical(existing[s.name]) === canonical(s.entry)) outcomes.push({ ...base, action: "identical" });
      else outcomes.push({ ...base, action: "skipped", reason: `a different "${s.name}" is already in mcpd's config` });
      continue;
    }
    const earlier = addedFrom.get(s.name);
    if (earlier) {
      if (canonical(earlier.entry) === canonical(s.entry))
        outcomes.push({ ...base, action: "identical", reason: `same as the one from ${earlier.origin}` });
      else outcomes.push({ ...base, action: "skipped", reason: `a different "${s.name}" was imported from ${earlier.origin}` });
      continue;
    }
    const entry = cleanEntry(s.entry);
    target[s.name] = entry;
    addedFrom.set(s.name, s);
    outcomes.push({ ...base, action: "added", entry });
  }
  return { config: { ...config, mcpServers: target }, outcomes };
}

/** The entry with empty optional parts left out, in the key order people write by hand. */
export function cleanEntry(e: ServerEntry): ServerEntry {
  const out: ServerEntry = {};
  if (e.type !== undefined) out.type = e.type;
  if (e.command !== undefined) out.command = e.command;
  if (e.args !== undefined && e.args.length > 0) out.args = e.args;
  if (e.env !== undefined && Object.keys(e.env).length > 0) out.env = e.env;
  if (e.cwd !== undefined) out.cwd = e.cwd;
  if (e.url !== undefined) out.url = e.url;
  if (e.headers !== undefined && Object.keys(e.headers).length > 0) out.headers = e.headers;
  if (e.enabled === false) out.enabled = false;
  if (e.tools !== undefined && e.tools.exclude.length > 0) out.tools = { exclude: [...e.tools.exclude] };
  return out;
}
