import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { resolvePaths } from "@mcpd/client";
import { ConfigError } from "@mcpd/protocol";
import { DAEMON_DEFAULTS } from "../defaults.js";
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
   * (`--config FILE`), where a typo should not silently mean zero servers. Default false.
   */
  required?: boolean;
}

/**
 * Reads, validates and resolves the config file: the one boundary where configuration enters mcpd.
 * A missing file is valid (zero servers, `source: "none"`) unless `required`. The result is deeply frozen.
 *
 * @throws ConfigError (MCPD_CONFIG_INVALID): unreadable file, a file over
 *   `DAEMON_DEFAULTS.maxConfigFileBytes`, text that is not UTF-8, invalid JSON (with line:column), or
 *   invalid values (every problem listed, one per line; see {@link parseConfig}).
 */
export async function loadConfig(opts: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const env = opts.env ?? process.env;
  const file = path.resolve(opts.file ?? resolvePaths(env).configFile);
  let text: string;
  try {
    const info = await stat(file);
    if (info.isDirectory()) throw new ConfigError(`${file}: is a directory, not a config file`);
    if (info.size > DAEMON_DEFAULTS.maxConfigFileBytes) {
      throw new ConfigError(`${file}: config file is ${info.size} bytes, over the limit of ${DAEMON_DEFAULTS.maxConfigFileBytes} bytes`);
    }
    const bytes = await readFile(file);
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch (err) {
      throw new ConfigError(`${file}: config file is not valid UTF-8 text`, { cause: err });
    }
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && !opts.required) return emptyConfig(file);
    const reason = code !== undefined && Object.hasOwn(READ_ERRORS, code) ? `${READ_ERRORS[code]} (${code})` : (err as Error).message;
    throw new ConfigError(`${file}: cannot read config file: ${reason}`, { cause: err });
  }
  return parseConfig(text, file, env);
}
