import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { resolvePaths } from "@mcpd/client";
import { ConfigError } from "@mcpd/protocol";
import { CONFIG_DEFAULTS } from "../defaults.js";
import type { LoadedConfig } from "./config-schema.js";
import { emptyConfig, parseConfig } from "./parse-config.js";

/** Plain words for the errors a config read commonly meets. */
const READ_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: "config file not found",
  EACCES: "permission denied",
  EPERM: "permission denied",
  ENOTDIR: "a parent of the path is not a directory",
  ELOOP: "too many symbolic links",
};

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** The file to read. Default: `resolvePaths(env).configFile` (`MCPD_CONFIG`, else `<configDir>/config.json`). */
  file?: string;
  /** Variables for `${VAR}` expansion and path resolution. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * When true, a missing file is an error instead of an empty config. Set it for a file the user named
   * (`--config FILE`, `MCPD_CONFIG`), where a typo should not silently mean zero servers. Default false.
   */
  required?: boolean;
  /** Who named the file (`--config`, `MCPD_CONFIG`), said in the error when a required file is missing. */
  namedBy?: ConfigFileOrigin;
}

/** How a config file was named explicitly. */
export type ConfigFileOrigin = "--config" | "MCPD_CONFIG";

/**
 * Whether the config file was named explicitly, and how: `--config FILE` (`flag`), else a non-empty
 * `MCPD_CONFIG`. Such a file must exist; the default location (`<configDir>/config.json`) may be absent.
 */
export function explicitConfigOrigin(env: NodeJS.ProcessEnv, flag?: string): ConfigFileOrigin | undefined {
  if (flag !== undefined && flag !== "") return "--config";
  return env.MCPD_CONFIG !== undefined && env.MCPD_CONFIG !== "" ? "MCPD_CONFIG" : undefined;
}

/**
 * Checks that a config file named explicitly exists and is a readable file, without parsing it.
 * @throws ConfigError (MCPD_CONFIG_INVALID) naming the file, what is wrong and who named it.
 */
export async function assertConfigFileExists(file: string, namedBy: ConfigFileOrigin): Promise<void> {
  const abs = path.resolve(file);
  try {
    const info = await stat(abs);
    if (info.isDirectory()) throw new ConfigError(`${abs}: is a directory, not a config file (named by ${namedBy})`);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw readError(abs, err, namedBy);
  }
}

function readError(file: string, err: unknown, namedBy: ConfigFileOrigin | undefined): ConfigError {
  const code = (err as NodeJS.ErrnoException).code;
  const reason = code !== undefined && Object.hasOwn(READ_ERRORS, code) ? `${READ_ERRORS[code]} (${code})` : (err as Error).message;
  // Only a named file can be missing: say so, and that leaving it unnamed means the default location.
  const named = namedBy && code === "ENOENT" ? `; it is named by ${namedBy}, and a config file named there must exist` : "";
  return new ConfigError(`${file}: cannot read config file: ${reason}${named}`, { cause: err });
}

/**
 * Reads, validates and resolves the config file: the one boundary where configuration enters mcpd.
 * A missing file is valid (zero servers, `source: "none"`) unless `required`. The result is deeply frozen.
 *
 * @throws ConfigError (MCPD_CONFIG_INVALID): unreadable file, a file over
 *   `CONFIG_DEFAULTS.maxConfigFileBytes`, text that is not UTF-8, invalid JSON (with line:column), or
 *   invalid values (every problem listed, one per line; see {@link parseConfig}).
 */
export async function loadConfig(opts: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const env = opts.env ?? process.env;
  const file = path.resolve(opts.file ?? resolvePaths(env).configFile);
  let text: string;
  try {
    const info = await stat(file);
    if (info.isDirectory()) throw new ConfigError(`${file}: is a directory, not a config file`);
    if (info.size > CONFIG_DEFAULTS.maxConfigFileBytes) {
      throw new ConfigError(`${file}: config file is ${info.size} bytes, over the limit of ${CONFIG_DEFAULTS.maxConfigFileBytes} bytes`);
    }
    const bytes = await readFile(file);
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch (err) {
      throw new ConfigError(`${file}: config file is not valid UTF-8 text`, { cause: err });
    }
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    if ((err as NodeJS.ErrnoException).code === "ENOENT" && !opts.required) return emptyConfig(file);
    throw readError(file, err, opts.namedBy);
  }
  return parseConfig(text, file, env);
}
