import path from "node:path";
import { pathToFileURL } from "node:url";
import type { z } from "zod";
import { CONFIG_DEFAULTS } from "../defaults.js";
import type { LogLevel, RestartPolicy, RootConfig } from "./config-schema.js";
import type { ConfigIssues } from "./config-issues.js";
import type { McpdOptionsSchema } from "./server-entry-schema.js";

/** mcpd's per-server keys as written (each optional), after validation: inferred from the schema. */
export type McpdOptions = Partial<z.output<typeof McpdOptionsSchema>>;

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

/**
 * mcpd's keys of a server entry or of `mcpd.defaults`, as the schema read them, finished: a `timeout`
 * that looks like seconds is warned of, and roots given as paths become `file://` URIs.
 */
export function finishMcpdOptions(read: McpdOptions, ctx: OptionContext): McpdOptions {
  const out: McpdOptions = { ...read };
  // Cline writes "timeout" in seconds; 60 ms is almost certainly a copied 60 s.
  if (out.timeout !== undefined && out.timeout < 1000) {
    ctx.issues.warn(ctx.where, `"timeout" is ${out.timeout} ms; mcpd timeouts are in milliseconds (did you mean ${out.timeout * 1000}?)`);
  }
  if (out.roots) out.roots = out.roots.map((r) => ({ ...r, uri: toFileUri(r.uri, ctx.homedir) }));
  return out;
}

/** A root's `uri` (checked by the schema: a file:// URI, an absolute path or `~/...`) as a file:// URI. */
function toFileUri(value: string, homedir: string): string {
  if (value.startsWith("file://")) return value;
  if (value === "~" || value.startsWith("~/")) return pathToFileURL(path.join(homedir, value.slice(1))).href;
  return pathToFileURL(value).href;
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
