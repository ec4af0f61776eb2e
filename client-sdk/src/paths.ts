import os from "node:os";
import path from "node:path";

/**
 * Where mcpd keeps its socket, state and configuration. The daemon, the CLI and the client SDK all call
 * {@link resolvePaths} so that every process finds the same socket from the same environment.
 * Pure: reads the environment it is given (and the OS's home/tmp dirs as fallbacks), never the disk.
 */
export interface McpdPaths {
  /** Directory for the socket and pid file: `MCPD_HOME`, else `$XDG_RUNTIME_DIR/mcpd`, else `<tmpdir>/mcpd-<uid>`. */
  readonly runtimeDir: string;
  /** The daemon's Unix socket: `MCPD_SOCKET`, else `<runtimeDir>/mcpd.sock`. */
  readonly socketPath: string;
  /** The running daemon's pid: `mcpd.pid` beside the socket (so two sockets never share one pid file). */
  readonly pidFile: string;
  /** Durable state: `MCPD_HOME`, else `$XDG_STATE_HOME/mcpd`, else `~/.local/state/mcpd`. */
  readonly stateDir: string;
  /** The daemon's log: `<stateDir>/mcpd.log`. */
  readonly logFile: string;
  /** The tool cache directory: `<stateDir>/cache`. */
  readonly cacheDir: string;
  /** Process-group records of spawned servers, for orphan cleanup after a crash: `<stateDir>/children.json`. */
  readonly childrenFile: string;
  /** `MCPD_CONFIG_DIR`, else `$XDG_CONFIG_HOME/mcpd`, else `~/.config/mcpd`. */
  readonly configDir: string;
  /** `options.configFile` (`--config FILE`), else `MCPD_CONFIG`, else `<configDir>/config.json`. */
  readonly configFile: string;
}

/** Overrides for {@link resolvePaths}. The OS fields exist for tests and for callers that already know them. */
export interface ResolvePathsOptions {
  /** A `--config FILE` given on the command line; wins over `MCPD_CONFIG`. Relative paths resolve against `cwd`. */
  configFile?: string;
  /** Base for relative overrides. Default: `process.cwd()`. */
  cwd?: string;
  /** Home directory. Default: `env.HOME` when absolute, else `os.homedir()`. */
  homedir?: string;
  /** Temporary directory. Default: `os.tmpdir()`. */
  tmpdir?: string;
  /** Numeric user id (or user name where there is none) used in `<tmpdir>/mcpd-<uid>`. Default: the current user's. */
  uid?: number | string;
}

/**
 * Resolves every mcpd path from `env` (default `process.env`). All results are absolute.
 *
 * Rules: an empty variable counts as unset. `MCPD_*` values may be relative (resolved against `cwd`) and may
 * start with `~/`. `XDG_*` values that are not absolute are ignored, as the XDG Base Directory spec asks.
 * A `--config` override goes in `options.configFile`.
 */
export function resolvePaths(env: NodeJS.ProcessEnv = process.env, options: ResolvePathsOptions = {}): McpdPaths {
  const cwd = options.cwd ?? process.cwd();
  const home = options.homedir ?? homeDirectory(env);
  const user = (name: string): string | undefined => {
    const value = env[name];
    return value ? expandUserPath(value, home, cwd) : undefined;
  };
  const xdg = (name: string): string | undefined => {
    const value = env[name];
    // The spec: "If an implementation encounters a relative path in any of these variables it should
    // consider the path invalid and ignore it."
    return value && path.isAbsolute(value) ? path.join(value, "mcpd") : undefined;
  };

  const mcpdHome = user("MCPD_HOME");
  const runtimeDir =
    mcpdHome ?? xdg("XDG_RUNTIME_DIR") ?? path.join(path.resolve(options.tmpdir ?? os.tmpdir()), `mcpd-${options.uid ?? currentUid()}`);
  const socketPath = user("MCPD_SOCKET") ?? path.join(runtimeDir, "mcpd.sock");
  const stateDir = mcpdHome ?? xdg("XDG_STATE_HOME") ?? path.join(home, ".local", "state", "mcpd");
  const configDir = user("MCPD_CONFIG_DIR") ?? xdg("XDG_CONFIG_HOME") ?? path.join(home, ".config", "mcpd");
  const configFile =
    (options.configFile ? expandUserPath(options.configFile, home, cwd) : undefined) ??
    user("MCPD_CONFIG") ??
    path.join(configDir, "config.json");

  return {
    runtimeDir,
    socketPath,
    pidFile: path.join(path.dirname(socketPath), "mcpd.pid"),
    stateDir,
    logFile: path.join(stateDir, "mcpd.log"),
    cacheDir: path.join(stateDir, "cache"),
    childrenFile: path.join(stateDir, "children.json"),
    configDir,
    configFile,
  };
}

/**
 * The longest Unix socket path the platform accepts, in bytes (sun_path minus its terminating NUL):
 * 107 on Linux, 103 on macOS and the BSDs.
 */
export function maxSocketPathBytes(platform: NodeJS.Platform = process.platform): number {
  return platform === "linux" || platform === "android" ? 107 : 103;
}

/**
 * Checks that `socketPath` fits the platform's limit. Returns an error message naming the path, its
 * length and the way out, or `undefined` when it fits. Node would otherwise fail with a bare EINVAL or,
 * on some systems, silently truncate the path.
 */
export function checkSocketPath(socketPath: string, platform: NodeJS.Platform = process.platform): string | undefined {
  const bytes = Buffer.byteLength(socketPath, "utf8");
  const max = maxSocketPathBytes(platform);
  if (bytes <= max) return undefined;
  return (
    `Socket path is ${bytes} bytes, longer than the ${max}-byte limit for Unix sockets on ${platform}: ${socketPath}. ` +
    `Set MCPD_SOCKET (or MCPD_HOME) to a shorter path.`
  );
}

/** The user's home as mcpd's paths read it: `env.HOME` when absolute, else `os.homedir()`. */
export function homeDirectory(env: NodeJS.ProcessEnv = process.env): string {
  return env.HOME && path.isAbsolute(env.HOME) ? env.HOME : os.homedir();
}

/** A path variable's value as mcpd reads it: `~` and `~/...` under `home`, anything else resolved against `cwd`. */
export function expandUserPath(value: string, home: string, cwd: string): string {
  if (value === "~") return home;
  if (value.startsWith("~/")) return path.join(home, value.slice(2));
  return path.resolve(cwd, value);
}

function currentUid(): number | string {
  // Windows has no getuid; the user name keeps per-user directories apart there.
  if (typeof process.getuid === "function") return process.getuid();
  return os.userInfo().username;
}
