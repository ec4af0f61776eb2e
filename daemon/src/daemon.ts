import { resolvePaths, type McpdPaths } from "@mcpd/client";
import type { OAuthClock } from "@mcpd/transports";
import { ConfigSource } from "./composition/config-source.js";
import { openDaemonLog } from "./composition/daemon-log.js";
import { McpdDaemon } from "./composition/mcpd-daemon.js";
import { preparePrivateDir } from "./infra/state-dir.js";
import type { Router } from "./router/router.js";
import { assertNoDaemonWithoutSocket } from "./socket/socket-watch.js";
import { prepareSocketPath } from "./socket/socket-path.js";
import type { MCPManager } from "./supervision/manager.js";

export interface RunDaemonOptions {
  configFile?: string;
  logLevel?: string;
  /** true: log to stderr (systemd, launchd, debugging). false: JSON log file with rotation. */
  foreground: boolean;
  env?: NodeJS.ProcessEnv;
  /** Install SIGTERM/SIGINT/SIGHUP handlers (default true). */
  handleSignals?: boolean;
  /** The clock of OAuth token lifetimes and refresh backoff (tests inject a fake one); default the real one. */
  oauthClock?: OAuthClock;
}

/** A running daemon, for embedding and tests. */
export interface DaemonHandle {
  paths: McpdPaths;
  manager: MCPManager;
  router: Router;
  /** Resolves with the exit code once the daemon has shut down. */
  done: Promise<number>;
  shutdown(reason?: string): Promise<number>;
  reload(): Promise<unknown>;
}

/**
 * Starts the daemon in this process: reads the config, checks and claims the socket and the state
 * directory (nothing is opened there before it passes the checks: another user's directory could hold a
 * link to one of our files), opens the log, then has the composition root ({@link McpdDaemon}) make the
 * parts and serve until SIGTERM/SIGINT or `mcpd/shutdown`. SIGHUP reloads the config.
 * @throws SocketSetupError (MCPD_ALREADY_RUNNING, MCPD_UNSAFE_SOCKET_DIR), StateDirError (MCPD_UNSAFE_STATE_DIR),
 *   ConfigError (MCPD_CONFIG_INVALID)
 */
export async function startDaemon(options: RunDaemonOptions): Promise<DaemonHandle> {
  const env = options.env ?? process.env;
  const paths = resolvePaths(env, options.configFile ? { configFile: options.configFile } : {});
  const source = new ConfigSource(paths, env, options.configFile, options.logLevel);
  const config = await source.load();
  const level = source.logLevel(config);
  assertNoDaemonWithoutSocket(paths.socketPath);
  // Held until the daemon has ended (its teardown releases it): no second daemon for this socket path.
  const lock = await prepareSocketPath(paths.socketPath);
  let log: ReturnType<typeof openDaemonLog>;
  let stateDirNote: string | undefined;
  try {
    stateDirNote = preparePrivateDir(paths.stateDir, "state directory");
    log = openDaemonLog(paths, options.foreground, level);
  } catch (err) {
    lock.release();
    throw err;
  }
  for (const w of config.warnings) log.root.warn({ file: config.file }, w);
  if (stateDirNote) log.root.warn({ dir: paths.stateDir }, stateDirNote);
  let daemon: McpdDaemon;
  try {
    const clock = options.oauthClock ? { oauthClock: options.oauthClock } : {};
    daemon = new McpdDaemon({ paths, source, config, log, lock, handleSignals: options.handleSignals !== false, ...clock });
    await daemon.start();
  } catch (err) {
    // What was logged is written, and the log's exit and crash hooks go with it.
    await log.close();
    lock.release();
    throw err;
  }
  const { lifecycle } = daemon;
  return {
    paths,
    manager: daemon.manager,
    router: daemon.router,
    done: lifecycle.done,
    shutdown: (reason) => lifecycle.shutdown(reason),
    reload: () => lifecycle.reload(),
  };
}

/** Runs the daemon until it shuts down; returns the process exit code. */
export async function runDaemon(options: RunDaemonOptions): Promise<number> {
  const d = await startDaemon(options);
  return d.done;
}
