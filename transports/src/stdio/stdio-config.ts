import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { ConfigError, SpawnError, checkTimeoutMs } from "@mcpd/protocol";
import type { StdioServerConfig, TransportOptions } from "../transport.js";

/** Constructor options of {@link StdioTransport}, besides the logger. Sizes in bytes, times in ms. */
export interface StdioTransportOptions extends TransportOptions {
  /** Longest stdout line accepted; longer lines are dropped and counted. Default `TRANSPORT_DEFAULTS.maxMessageBytes` (4 MiB). */
  maxLineBytes?: number;
  /** stderr lines kept for {@link StdioTransport.stderrTail}. Default 200. */
  stderrMaxLines?: number;
  /** stderr bytes kept. Default 64 KiB. */
  stderrMaxBytes?: number;
  /** Bytes allowed to wait for `drain` on the child's stdin; beyond it requests fail with QueueFullError. Default 16 MiB. */
  maxPendingWriteBytes?: number;
  /** close(): wait after ending stdin before SIGTERM, and after SIGTERM before SIGKILL. Default 2000. */
  closeGraceMs?: number;
}

/**
 * Checks a stdio server config's shape. Throws ConfigError (MCPD_CONFIG_INVALID) naming the field.
 * The config loader validates files earlier; this guards programmatic callers.
 */
export function validateStdioConfig(config: StdioServerConfig): void {
  const bad = (field: string, want: string): never => {
    throw new ConfigError(`stdio server config: "${field}" must be ${want}`);
  };
  if (config === null || typeof config !== "object") bad("config", "an object");
  if (config.type !== undefined && config.type !== "stdio") bad("type", `"stdio" or absent (got ${JSON.stringify(config.type)})`);
  if (typeof config.command !== "string" || config.command.trim() === "") bad("command", "a non-empty string");
  if (config.args !== undefined && (!Array.isArray(config.args) || !config.args.every((a) => typeof a === "string"))) {
    bad("args", "an array of strings");
  }
  if (config.env !== undefined) {
    if (config.env === null || typeof config.env !== "object" || Array.isArray(config.env)) bad("env", "an object of strings");
    for (const [key, value] of Object.entries(config.env)) if (typeof value !== "string") bad(`env.${key}`, "a string");
  }
  if (config.cwd !== undefined && (typeof config.cwd !== "string" || config.cwd === "")) bad("cwd", "a non-empty string");
  if (config.timeout !== undefined) checkTimeoutMs(config.timeout, 'stdio server config: "timeout"', "non-negative", ConfigError);
  if (config.envMode !== undefined && config.envMode !== "inherit" && config.envMode !== "allowlist") {
    bad("envMode", `"inherit" or "allowlist" (got ${JSON.stringify(config.envMode)})`);
  }
}

/** A numeric option that must be > 0, or its default when absent. Throws ConfigError naming it. */
export function positiveOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !(value > 0)) {
    throw new ConfigError(`StdioTransport option "${name}" must be a number > 0 (got ${String(value)})`);
  }
  return value;
}

/**
 * Turns a spawn failure into a SpawnError (MCPD_SPAWN_FAILED, with the OS error code in `errno`) that
 * says what is wrong in words: Node reports a missing working directory as ENOENT of the command, and one
 * the user may not enter as EACCES of the command, so the cwd is checked to tell "command not found" from
 * "working directory does not exist", and "not executable" from "working directory is not accessible".
 */
export async function describeSpawnError(command: string, cwd: string | undefined, err: unknown): Promise<SpawnError> {
  const e = err as NodeJS.ErrnoException | undefined;
  const code = typeof e?.code === "string" ? e.code : undefined;
  let detail: string;
  if (cwd !== undefined && (code === "ENOENT" || code === "ENOTDIR")) {
    const dir = await stat(cwd).catch(() => undefined);
    if (!dir) detail = `working directory "${cwd}" does not exist (${code})`;
    else if (!dir.isDirectory()) detail = `working directory "${cwd}" is not a directory (${code})`;
    else detail = `command not found (${code})`;
  } else if (
    cwd !== undefined &&
    code === "EACCES" &&
    (await access(cwd, constants.X_OK).then(
      () => false,
      () => true,
    ))
  ) {
    detail = `working directory "${cwd}" is not accessible: permission denied (EACCES)`;
  } else if (code === "ENOENT") detail = "command not found (ENOENT)";
  else if (code === "EACCES") detail = "permission denied: not executable, or a directory (EACCES)";
  else if (code === "EMFILE") detail = "this process has no file descriptors left for the server's pipes (EMFILE)";
  else if (code === "ENFILE") detail = "the system's file table is full (ENFILE)";
  else if (code === "EAGAIN") detail = "no process can be created now: the process limit is reached? (EAGAIN)";
  else detail = e?.message ?? String(err);
  return new SpawnError(command, detail, code === undefined ? { cause: err } : { cause: err, errno: code });
}
