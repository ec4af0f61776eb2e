import path from "node:path";
import { pathToFileURL } from "node:url";
import { MAX_TIMER_MS, PROTOCOL_ERA_SETTINGS, type ProtocolEraSetting } from "@mcpd/protocol";
import { CONFIG_DEFAULTS } from "../defaults.js";
import type { EnvMode, LogLevel, RestartPolicy, RootConfig, SharingMode, StartupMode } from "./config-schema.js";
import { LOG_LEVELS, RESTART_KEYS } from "./config-schema.js";
import { describeValue, isPlainObject, type ConfigIssues } from "./config-issues.js";
import { hintFor } from "./did-you-mean.js";

/** mcpd's per-server keys as written (each optional), after validation. */
export interface McpdOptions {
  enabled?: boolean;
  timeout?: number;
  maxTotalTimeout?: number;
  startup?: StartupMode;
  idleTimeout?: number;
  maxConcurrency?: number;
  maxQueue?: number;
  restart?: Partial<RestartPolicy>;
  sharing?: SharingMode;
  healthCheckIntervalMs?: number;
  roots?: RootConfig[];
  envMode?: EnvMode;
  logLevel?: LogLevel;
  protocolEra?: ProtocolEraSetting;
}

/** The resolved values of {@link McpdOptions}, after `mcpd.defaults` and {@link CONFIG_DEFAULTS}. */
export type ResolvedMcpdOptions = Required<Omit<McpdOptions, "restart" | "roots" | "logLevel">> & {
  restart: RestartPolicy;
  roots: RootConfig[];
  /** null: the daemon's own level ({@link CONFIG_DEFAULTS}.serverLogLevel). */
  logLevel: LogLevel | null;
};

/** What a reader needs besides the value: where to report, and how to resolve `~` and relative paths. */
export interface OptionContext {
  issues: ConfigIssues;
  /** `server "github"` or `"mcpd.defaults"`. */
  where: string;
  homedir: string;
}

interface IntRule {
  min: number;
  max: number;
  /** The sentence after `must be`, e.g. "a positive integer (milliseconds)". */
  expected: string;
}

const POSITIVE_MS: IntRule = { min: 1, max: MAX_TIMER_MS, expected: "a positive integer (milliseconds)" };
const NON_NEGATIVE_MS: IntRule = { min: 0, max: MAX_TIMER_MS, expected: "an integer >= 0 (milliseconds)" };

/**
 * Reads mcpd's own keys from a server entry or from `mcpd.defaults` (only those present; unknown keys
 * are the caller's business). Bad values are reported to `ctx.issues` and left out of the result.
 */
export function readMcpdOptions(raw: Record<string, unknown>, ctx: OptionContext): McpdOptions {
  const out: McpdOptions = {};
  const has = (key: string): boolean => Object.hasOwn(raw, key) && raw[key] !== undefined;
  const int = (key: string, rule: IntRule): number | undefined => readInt(raw[key], rule, key, ctx);
  const oneOf = <T extends string>(key: string, allowed: readonly T[]): T | undefined => {
    const value = raw[key];
    if (typeof value === "string" && (allowed as readonly string[]).includes(value)) return value as T;
    const hint = typeof value === "string" ? hintFor(value, allowed) : "";
    ctx.issues.error(ctx.where, `"${key}" must be one of ${allowed.map((a) => `"${a}"`).join(", ")}, got ${describeValue(value)}${hint}`);
    return undefined;
  };
  const set = <K extends keyof McpdOptions>(key: K, value: McpdOptions[K] | undefined): void => {
    if (value !== undefined) out[key] = value;
  };

  if (has("enabled")) {
    if (typeof raw.enabled === "boolean") out.enabled = raw.enabled;
    else ctx.issues.error(ctx.where, `"enabled" must be true or false, got ${describeValue(raw.enabled)}`);
  }
  if (has("timeout")) {
    const timeout = int("timeout", POSITIVE_MS);
    // Cline writes "timeout" in seconds; 60 ms is almost certainly a copied 60 s.
    if (timeout !== undefined && timeout < 1000) {
      ctx.issues.warn(ctx.where, `"timeout" is ${timeout} ms; mcpd timeouts are in milliseconds (did you mean ${timeout * 1000}?)`);
    }
    set("timeout", timeout);
  }
  if (has("maxTotalTimeout")) set("maxTotalTimeout", int("maxTotalTimeout", POSITIVE_MS));
  if (has("startup")) set("startup", oneOf<StartupMode>("startup", ["eager", "lazy"]));
  if (has("idleTimeout"))
    set("idleTimeout", int("idleTimeout", { ...NON_NEGATIVE_MS, expected: "an integer >= 0 (milliseconds; 0 = never)" }));
  if (has("maxConcurrency")) set("maxConcurrency", int("maxConcurrency", { min: 1, max: 10_000, expected: "an integer from 1 to 10000" }));
  if (has("maxQueue")) set("maxQueue", int("maxQueue", { min: 0, max: 1_000_000, expected: "an integer from 0 to 1000000" }));
  if (has("sharing")) set("sharing", oneOf<SharingMode>("sharing", ["shared", "per-client"]));
  if (has("healthCheckIntervalMs")) {
    set(
      "healthCheckIntervalMs",
      int("healthCheckIntervalMs", { ...NON_NEGATIVE_MS, expected: "an integer >= 0 (milliseconds; 0 disables)" }),
    );
  }
  if (has("envMode")) set("envMode", oneOf<EnvMode>("envMode", ["inherit", "allowlist"]));
  if (has("logLevel")) set("logLevel", oneOf<LogLevel>("logLevel", LOG_LEVELS));
  if (has("protocolEra")) set("protocolEra", oneOf<ProtocolEraSetting>("protocolEra", PROTOCOL_ERA_SETTINGS));

  if (has("restart")) {
    const restart = readRestart(raw.restart, ctx);
    if (restart) out.restart = restart;
  }

  if (has("roots")) {
    const roots = readRoots(raw.roots, ctx);
    if (roots) out.roots = roots;
  }
  return out;
}

/** An integer within `rule`'s bounds, or undefined (reported, naming `label`). */
function readInt(value: unknown, rule: IntRule, label: string, ctx: OptionContext): number | undefined {
  if (typeof value === "number" && Number.isInteger(value) && value >= rule.min && value <= rule.max) return value;
  const tooBig = typeof value === "number" && Number.isInteger(value) && value > rule.max;
  ctx.issues.error(ctx.where, `"${label}" must be ${rule.expected}${tooBig ? ` of at most ${rule.max}` : ""}, got ${describeValue(value)}`);
  return undefined;
}

/** `restart`: the crash-loop policy's keys that are given and valid; undefined when it is not an object (reported). */
function readRestart(restart: unknown, ctx: OptionContext): Partial<RestartPolicy> | undefined {
  if (!isPlainObject(restart)) {
    ctx.issues.error(ctx.where, `"restart" must be an object like {"maxRestarts": 5, "windowMs": 60000}, got ${describeValue(restart)}`);
    return undefined;
  }
  const policy: { -readonly [K in keyof RestartPolicy]?: number } = {};
  for (const key of Object.keys(restart)) {
    if (!(RESTART_KEYS as readonly string[]).includes(key)) {
      ctx.issues.warn(ctx.where, `unknown key "restart.${key}" ignored${hintFor(key, RESTART_KEYS)}`);
    }
  }
  const rules: Record<(typeof RESTART_KEYS)[number], IntRule> = {
    maxRestarts: { min: 0, max: 1_000_000, expected: "an integer >= 0" },
    windowMs: POSITIVE_MS,
    initialDelayMs: NON_NEGATIVE_MS,
    maxDelayMs: NON_NEGATIVE_MS,
  };
  for (const key of RESTART_KEYS) {
    if (restart[key] === undefined) continue;
    const value = readInt(restart[key], rules[key], `restart.${key}`, ctx);
    if (value !== undefined) policy[key] = value;
  }
  return policy;
}

function readRoots(value: unknown, ctx: OptionContext): RootConfig[] | undefined {
  if (!Array.isArray(value)) {
    ctx.issues.error(ctx.where, `"roots" must be an array of {"uri": "file:///...", "name": "..."}, got ${describeValue(value)}`);
    return undefined;
  }
  const roots: RootConfig[] = [];
  value.forEach((item, index) => {
    const label = `roots[${index}]`;
    // A bare string is shorthand for {"uri": ...}.
    const entry = typeof item === "string" ? { uri: item } : item;
    if (!isPlainObject(entry)) {
      ctx.issues.error(ctx.where, `"${label}" must be an object like {"uri": "file:///path", "name": "..."}, got ${describeValue(item)}`);
      return;
    }
    for (const key of Object.keys(entry)) {
      if (key !== "uri" && key !== "name")
        ctx.issues.warn(ctx.where, `unknown key "${label}.${key}" ignored${hintFor(key, ["uri", "name"])}`);
    }
    const uri = toFileUri(entry.uri, ctx.homedir);
    if (uri === undefined) {
      ctx.issues.error(ctx.where, `"${label}.uri" must be a file:// URI or an absolute path, got ${describeValue(entry.uri)}`);
      return;
    }
    if (entry.name !== undefined && typeof entry.name !== "string") {
      ctx.issues.error(ctx.where, `"${label}.name" must be a string, got ${describeValue(entry.name)}`);
      return;
    }
    roots.push(entry.name === undefined ? { uri } : { uri, name: entry.name });
  });
  return roots;
}

function toFileUri(value: unknown, homedir: string): string | undefined {
  if (typeof value !== "string" || value === "") return undefined;
  if (value.startsWith("file://")) {
    try {
      new URL(value);
      return value;
    } catch {
      return undefined;
    }
  }
  if (value === "~" || value.startsWith("~/")) return pathToFileURL(path.join(homedir, value.slice(1))).href;
  if (path.isAbsolute(value)) return pathToFileURL(value).href;
  return undefined;
}

/**
 * Applies `server` over `defaults` over {@link CONFIG_DEFAULTS}. `maxTotalTimeout`, when set nowhere,
 * is never below the resolved `timeout`; when set below it, that is an error. A `maxDelayMs` below
 * `initialDelayMs` is an error too.
 */
export function resolveMcpdOptions(server: McpdOptions, defaults: McpdOptions, ctx: OptionContext): ResolvedMcpdOptions {
  const D = CONFIG_DEFAULTS;
  const timeout = server.timeout ?? defaults.timeout ?? D.requestTimeoutMs;
  const explicitTotal = server.maxTotalTimeout ?? defaults.maxTotalTimeout;
  if (explicitTotal !== undefined && explicitTotal < timeout) {
    ctx.issues.error(ctx.where, `"maxTotalTimeout" (${explicitTotal} ms) must not be less than "timeout" (${timeout} ms)`);
  }
  const restart: RestartPolicy = { ...D.restart, ...defaults.restart, ...server.restart };
  if (restart.maxDelayMs < restart.initialDelayMs) {
    ctx.issues.error(
      ctx.where,
      `"restart.maxDelayMs" (${restart.maxDelayMs} ms) must not be less than "restart.initialDelayMs" (${restart.initialDelayMs} ms)`,
    );
  }
  return {
    enabled: server.enabled ?? defaults.enabled ?? true,
    timeout,
    maxTotalTimeout: explicitTotal ?? Math.max(D.maxTotalTimeoutMs, timeout),
    startup: server.startup ?? defaults.startup ?? D.startup,
    idleTimeout: server.idleTimeout ?? defaults.idleTimeout ?? D.idleTimeoutMs,
    maxConcurrency: server.maxConcurrency ?? defaults.maxConcurrency ?? D.maxConcurrency,
    maxQueue: server.maxQueue ?? defaults.maxQueue ?? D.maxQueue,
    restart,
    sharing: server.sharing ?? defaults.sharing ?? D.sharing,
    healthCheckIntervalMs: server.healthCheckIntervalMs ?? defaults.healthCheckIntervalMs ?? D.healthCheckIntervalMs,
    roots: server.roots ?? defaults.roots ?? [],
    envMode: server.envMode ?? defaults.envMode ?? D.envMode,
    logLevel: server.logLevel ?? defaults.logLevel ?? D.serverLogLevel,
    protocolEra: server.protocolEra ?? defaults.protocolEra ?? D.protocolEra,
  };
}
