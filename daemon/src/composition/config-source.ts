import { ConfigError } from "@mcpd/protocol";
import type { McpdPaths } from "@mcpd/client";
import {
  explicitConfigOrigin,
  httpPortFromEnv,
  loadConfig,
  LOG_LEVELS,
  type HttpSettings,
  type LoadedConfig,
  type LogLevel,
} from "../config/index.js";
import { CONFIG_DEFAULTS, RUNTIME_DEFAULTS } from "../defaults.js";

/**
 * Where the daemon's config comes from and what the environment overrides in it: the file (one named with
 * `--config` or `MCPD_CONFIG` must exist: a typo must not mean zero servers; the default may be absent),
 * the log level (`--log-level`, then `MCPD_LOG_LEVEL`, then the file's, read again at each reload), the HTTP port (`MCPD_HTTP_PORT`: tests and a second
 * daemon use 0, any free port).
 */
export class ConfigSource {
  private readonly namedBy: ReturnType<typeof explicitConfigOrigin>;

  /**
   * @param logLevelFlag `--log-level`, which wins over `MCPD_LOG_LEVEL` and the config's `mcpd.logLevel`,
   *   at start and at every reload.
   */
  constructor(
    private readonly paths: McpdPaths,
    private readonly env: NodeJS.ProcessEnv,
    configFlag: string | undefined,
    private readonly logLevelFlag?: string,
  ) {
    this.namedBy = explicitConfigOrigin(env, configFlag);
  }

  /** Reads and checks the config file. @throws ConfigError (MCPD_CONFIG_INVALID) naming the file and key. */
  load(): Promise<LoadedConfig> {
    const required = this.namedBy !== undefined;
    return loadConfig({ file: this.paths.configFile, env: this.env, required, ...(this.namedBy ? { namedBy: this.namedBy } : {}) });
  }

  /**
   * The daemon's log level: `--log-level`, else `MCPD_LOG_LEVEL`, else `config`'s, else the default.
   * @throws ConfigError (MCPD_CONFIG_INVALID) naming the setting, for a value that is not a level.
   */
  logLevel(config: LoadedConfig): LogLevel {
    const envValue = this.env.MCPD_LOG_LEVEL;
    const option = this.logLevelFlag;
    const [value, origin] = option !== undefined ? [option, "--log-level"] : [envValue || undefined, "MCPD_LOG_LEVEL"];
    if (value === undefined) return config.settings.logLevel ?? CONFIG_DEFAULTS.logLevel;
    if ((LOG_LEVELS as readonly string[]).includes(value)) return value as LogLevel;
    throw new ConfigError(`${origin} must be one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(value)}`);
  }

  /** The HTTP front end's settings: the config's, with `MCPD_HTTP_PORT` over its port. */
  http(config: LoadedConfig): HttpSettings {
    const port = httpPortFromEnv(this.env);
    return port === undefined ? config.settings.http : { ...config.settings.http, port };
  }

  /** The daemon-wide budget of bytes held for clients (`mcpd.maxBufferedBytesTotal`). */
  static bufferBudget(config: LoadedConfig): number {
    return config.settings.maxBufferedBytesTotal ?? RUNTIME_DEFAULTS.maxBufferedBytesTotal;
  }
}
