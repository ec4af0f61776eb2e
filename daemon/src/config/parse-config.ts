import os from "node:os";
import path from "node:path";
import { ConfigError } from "@mcpd/protocol";
import { CONFIG_DEFAULTS } from "../defaults.js";
import type { DaemonSettings, LoadedConfig, OtlpSettings, ResolvedServerConfig } from "./config-schema.js";
import { ConfigFileSchema, SettingsSchema } from "./config-file-schema.js";
import { deepFreeze } from "./config-hash.js";
import { ConfigIssues, describeValue, isPlainObject } from "./config-issues.js";
import { readProfiles } from "./filter-config.js";
import { hintFor } from "./did-you-mean.js";
import { defaultHttpSettings } from "./http-settings.js";
import { parseJsonc } from "./parse-jsonc.js";
import { readWithSchema } from "./read-with-schema.js";
import { resolveServer } from "./resolve-server.js";
import { MCPD_OPTIONS_SHAPE, McpdOptionsSchema } from "./server-entry-schema.js";
import { finishMcpdOptions, type McpdOptions } from "./server-options.js";

/** The top-level keys and their schemas. */
const TOP_LEVEL = ConfigFileSchema.shape;

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
    if (Object.hasOwn(TOP_LEVEL, key)) continue;
    const value = root[key];
    if (isPlainObject(value) && (value.command !== undefined || value.url !== undefined)) {
      issues.warn("", `top-level key "${key}" looks like a server and is ignored; put it inside "mcpServers"`);
    } else {
      issues.warn("", `unknown top-level key "${key}" ignored${hintFor(key, Object.keys(TOP_LEVEL))}`);
    }
  }
  // `$schema` names the file's JSON Schema for editors, `inputs` are VS Code's prompts: both ignored. A value
  // of the wrong kind is only a warning, as any value was accepted before the schema.
  for (const key of ["$schema", "inputs"] as const) {
    if (root[key] === undefined || TOP_LEVEL[key].safeParse(root[key]).success) continue;
    const expected = key === "$schema" ? "a string (the schema's path or URL)" : "an array";
    issues.warn("", `"${key}" should be ${expected}, got ${describeValue(root[key])}; ignored`);
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

const MCPD_KEYS = Object.keys(MCPD_OPTIONS_SHAPE);

/** A per-server key one level too high (`"mcpd": {"envMode": ...}`): say where it belongs. */
function perServerKeyTooHigh(key: string): string | undefined {
  if (!MCPD_KEYS.includes(key)) return undefined;
  return `"mcpd.${key}" is ignored: per-server keys for every server go in "mcpd.defaults" ("mcpd": {"defaults": {"${key}": ...}})`;
}

function readSettings(value: unknown, issues: ConfigIssues, homedir: string): { settings: DaemonSettings; defaults: McpdOptions } {
  const base: DaemonSettings = { logLevel: CONFIG_DEFAULTS.logLevel, http: defaultHttpSettings() };
  if (value === undefined) return { settings: base, defaults: {} };
  const read = readWithSchema(SettingsSchema, value, {
    issues,
    where: "",
    prefix: "mcpd.",
    skip: ["defaults", "profiles"],
    unknownKey: perServerKeyTooHigh,
  });
  if (read === undefined || !isPlainObject(value)) return { settings: base, defaults: {} };
  const { defaults: _d, profiles: _p, http, telemetry, ...rest } = read;
  const settings: DaemonSettings = { ...base, ...rest, http: { ...base.http, ...http }, ...readTelemetry(telemetry, value, issues) };
  if (value.defaults === undefined) return { settings, defaults: {} };
  const where = `"mcpd.defaults"`;
  const defaults = readWithSchema(McpdOptionsSchema, value.defaults, {
    issues,
    where,
    prefix: "",
    unknownKey: (key) => `unknown key "${key}" ignored (only mcpd's per-server keys belong here)${hintFor(key, MCPD_KEYS)}`,
  });
  return { settings, defaults: defaults === undefined ? {} : finishMcpdOptions(defaults, { issues, where, homedir }) };
}

/** `mcpd.telemetry` with every default applied: absent unless `otlp` has its `endpoint` (a missing one is an error). */
function readTelemetry(
  read: { otlp?: Partial<OtlpSettings> } | undefined,
  raw: Record<string, unknown>,
  issues: ConfigIssues,
): Pick<DaemonSettings, "telemetry"> {
  const otlp = read?.otlp;
  if (otlp === undefined) return {};
  if (otlp.endpoint !== undefined)
    return { telemetry: { otlp: { ...CONFIG_DEFAULTS.telemetryOtlp, headers: {}, ...otlp, endpoint: otlp.endpoint } } };
  // A bad endpoint was reported as such; a missing one is reported here (the file's keys are read one by one).
  const given = isPlainObject(raw.telemetry) && isPlainObject(raw.telemetry.otlp) && raw.telemetry.otlp.endpoint !== undefined;
  if (!given)
    issues.error("", `"mcpd.telemetry.otlp.endpoint" is required: the OTLP/HTTP traces URL, such as "http://127.0.0.1:4318/v1/traces"`);
  return {};
}
