import os from "node:os";
import path from "node:path";
import { ConfigError, MAX_TIMER_MS } from "@mcpd/protocol";
import { CONFIG_DEFAULTS } from "../defaults.js";
import type { DaemonSettings, LoadedConfig, LogLevel, ResolvedServerConfig } from "./config-schema.js";
import { LOG_LEVELS, MCPD_SERVER_KEYS, SETTINGS_KEYS, TOP_LEVEL_KEYS } from "./config-schema.js";
import { deepFreeze } from "./config-hash.js";
import { ConfigIssues, describeValue, isPlainObject } from "./config-issues.js";
import { readProfiles } from "./filter-config.js";
import { hintFor } from "./did-you-mean.js";
import { defaultHttpSettings, readHttpSettings } from "./http-settings.js";
import { parseJsonc } from "./parse-jsonc.js";
import { resolveServer } from "./resolve-server.js";
import { readMcpdOptions, type McpdOptions } from "./server-options.js";

/** Options of {@link parseConfig}. */
export interface ParseConfigOptions {
  /**
   * `error` (default): `${NAME}` without a default, NAME unset, is an error. `defer`: a warning, for
   * checking a file meant for another environment (the daemon's): the reference stays as written, and
   * a `url` holding one is not checked.
   */
  unsetVariables?: "error" | "defer";
}

/**
 * Parses and validates the text of a config file into a deeply frozen {@link LoadedConfig}. Pure: reads
 * only `text` and `env` (no files). `file` names the file in messages, and relative `cwd` values resolve
 * against its directory.
 *
 * Accepted: `{"mcpServers": {...}}` (Claude Desktop/Code, Cursor), `{"servers": {...}}` (VS Code), or both
 * (merged; on a duplicate name the `mcpServers` entry wins, with a warning), and an optional `"mcpd"`
 * section (`logLevel`, `defaults`). Comments and trailing commas are allowed. Every error in the file is
 * reported at once; unknown keys are warnings with a "did you mean" hint.
 *
 * @throws ConfigError (MCPD_CONFIG_INVALID) listing every problem, one per line:
 *   `<file>: server "<name>": "<key>" must be ..., got ...`, or `<file>:<line>:<col>: invalid JSON: ...`.
 */
export function parseConfig(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
  options: ParseConfigOptions = {},
): LoadedConfig {
  const absFile = path.resolve(file);
  const issues = new ConfigIssues(absFile);
  const parsed = parseJsonc(text, absFile);
  issues.warnings.push(...parsed.warnings);
  const root = parsed.value;
  if (!isPlainObject(root)) {
    throw new ConfigError(`${absFile}: the top level must be a JSON object such as {"mcpServers": {}}, got ${describeValue(root)}`);
  }
  const homedir = env.HOME && path.isAbsolute(env.HOME) ? env.HOME : os.homedir();

  const sections = (["mcpServers", "servers"] as const).filter((key) => root[key] !== undefined);
  for (const key of Object.keys(root)) {
    if ((TOP_LEVEL_KEYS as readonly string[]).includes(key)) continue;
    const value = root[key];
    if (isPlainObject(value) && (value.command !== undefined || value.url !== undefined)) {
      issues.warn("", `top-level key "${key}" looks like a server and is ignored; put it inside "mcpServers"`);
    } else {
      issues.warn("", `unknown top-level key "${key}" ignored${hintFor(key, TOP_LEVEL_KEYS)}`);
    }
  }

  const { settings, defaults } = readSettings(root.mcpd, issues, homedir);

  const servers: ResolvedServerConfig[] = [];
  const seen = new Map<string, string>();
  for (const section of sections) {
    const entries = root[section];
    if (!isPlainObject(entries)) {
      issues.error("", `"${section}" must be an object mapping server names to server entries, got ${describeValue(entries)}`);
      continue;
    }
    for (const [name, raw] of Object.entries(entries)) {
      const first = seen.get(name);
      if (first !== undefined) {
        issues.warn(`server "${name}"`, `defined in both "${first}" and "${section}"; using the one in "${first}"`);
        continue;
      }
      seen.set(name, section);
      const server = resolveServer(name, raw, { issues, env, baseDir: path.dirname(absFile), homedir, defaults, ...options });
      if (server) servers.push(server);
    }
  }

  const profiles = isPlainObject(root.mcpd) ? readProfiles(root.mcpd.profiles, [...seen.keys()], issues) : undefined;
  if (issues.errors.length > 0) throw new ConfigError(issues.errors.join("\n"));
  return deepFreeze({
    file: absFile,
    source: "file",
    servers,
    settings: profiles ? { ...settings, profiles } : settings,
    warnings: issues.warnings,
  });
}

/** The config of a missing file: zero servers, default settings. Deeply frozen. */
export function emptyConfig(file: string): LoadedConfig {
  return deepFreeze({
    file: path.resolve(file),
    source: "none",
    servers: [],
    settings: { logLevel: CONFIG_DEFAULTS.logLevel, http: defaultHttpSettings() },
    warnings: [],
  });
}

/** The daemon's numeric settings: each an integer within its range. */
const SETTING_RULES = {
  maxConnections: { min: 1, max: 1_000_000, expected: "an integer from 1 to 1000000" },
  fdReserve: { min: 0, max: 1_000_000, expected: "an integer from 0 to 1000000" },
  maxBufferedBytesTotal: { min: 65_536, max: Number.MAX_SAFE_INTEGER, expected: "an integer of at least 65536 (bytes)" },
  partialLineTimeoutMs: { min: 1, max: MAX_TIMER_MS, expected: `an integer from 1 to ${MAX_TIMER_MS} (milliseconds)` },
} as const;

function readSettings(value: unknown, issues: ConfigIssues, homedir: string): { settings: DaemonSettings; defaults: McpdOptions } {
  const settings: { -readonly [K in keyof DaemonSettings]: DaemonSettings[K] } = {
    logLevel: CONFIG_DEFAULTS.logLevel,
    http: defaultHttpSettings(),
  };
  let defaults: McpdOptions = {};
  if (value === undefined) return { settings, defaults };
  if (!isPlainObject(value)) {
    issues.error("", `"mcpd" must be an object such as {"logLevel": "info"}, got ${describeValue(value)}`);
    return { settings, defaults };
  }
  for (const key of Object.keys(value)) {
    if ((SETTINGS_KEYS as readonly string[]).includes(key)) continue;
    if ((MCPD_SERVER_KEYS as readonly string[]).includes(key)) {
      // A per-server key one level too high (`"mcpd": {"envMode": ...}`): say where it belongs.
      issues.warn(
        "",
        `"mcpd.${key}" is ignored: per-server keys for every server go in "mcpd.defaults" ("mcpd": {"defaults": {"${key}": ...}})`,
      );
    } else {
      issues.warn("", `unknown key "mcpd.${key}" ignored${hintFor(key, SETTINGS_KEYS)}`);
    }
  }
  if (value.logLevel !== undefined) {
    if (typeof value.logLevel === "string" && (LOG_LEVELS as readonly string[]).includes(value.logLevel)) {
      settings.logLevel = value.logLevel as LogLevel;
    } else {
      const hint = typeof value.logLevel === "string" ? hintFor(value.logLevel, LOG_LEVELS) : "";
      issues.error(
        "",
        `"mcpd.logLevel" must be one of ${LOG_LEVELS.map((l) => `"${l}"`).join(", ")}, got ${describeValue(value.logLevel)}${hint}`,
      );
    }
  }
  for (const [key, rule] of Object.entries(SETTING_RULES) as Array<
    [keyof typeof SETTING_RULES, (typeof SETTING_RULES)[keyof typeof SETTING_RULES]]
  >) {
    const v = value[key];
    if (v === undefined) continue;
    if (typeof v === "number" && Number.isInteger(v) && v >= rule.min && v <= rule.max) settings[key] = v;
    else issues.error("", `"mcpd.${key}" must be ${rule.expected}, got ${describeValue(v)}`);
  }
  settings.http = readHttpSettings(value.http, issues);
  if (value.defaults !== undefined) {
    const where = `"mcpd.defaults"`;
    if (!isPlainObject(value.defaults)) {
      issues.error(where, `must be an object of per-server keys such as {"timeout": 60000}, got ${describeValue(value.defaults)}`);
    } else {
      for (const key of Object.keys(value.defaults)) {
        if (!(MCPD_SERVER_KEYS as readonly string[]).includes(key)) {
          issues.warn(where, `unknown key "${key}" ignored (only mcpd's per-server keys belong here)${hintFor(key, MCPD_SERVER_KEYS)}`);
        }
      }
      defaults = readMcpdOptions(value.defaults, { issues, where, homedir });
    }
  }
  return { settings, defaults };
}
