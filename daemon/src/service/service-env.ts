import { expandUserPath, homeDirectory } from "@mcpd/client/paths";
import { DAEMON_ALLOCATOR_ENV, withAllocatorEnv } from "../infra/allocator-env.js";
import type { DAEMON_NODE_FLAGS } from "../infra/node-flags.js";
/**
 * What a service definition needs to know about the installing shell: which node and which `mcpd`
 * to run, and the environment to give the daemon.
 */
export interface ServiceSpec {
  /** Absolute path of the node binary (`process.execPath`). */
  nodePath: string;
  /**
   * Node flags for the daemon, before the script: {@link DAEMON_NODE_FLAGS}, always (a service does not
   * carry the shell's NODE_OPTIONS; edit the file to change them).
   */
  nodeFlags: readonly string[];
  /** Absolute path of the `mcpd` bin script. */
  binPath: string;
  /** Environment variables for the daemon: PATH and every MCPD_* variable, in a stable order. */
  env: Array<[string, string]>;
}

/** The `MCPD_*` variables that name a file or directory (read by `resolvePaths`, which allows relative ones). */
const MCPD_PATH_VARIABLES: ReadonlySet<string> = new Set(["MCPD_HOME", "MCPD_SOCKET", "MCPD_CONFIG_DIR", "MCPD_CONFIG"]);

/**
 * Picks the variables a service must carry from the installing shell: `PATH` (so servers' commands such
 * as `npx` or `uvx` resolve as they do in the shell; services start with a minimal PATH otherwise) and
 * every `MCPD_*` variable (MCPD_HOME, MCPD_CONFIG, MCPD_SOCKET, ...), sorted by name, with the paths among
 * them ({@link MCPD_PATH_VARIABLES}) made absolute as the shell's mcpd reads them (against `cwd`, `~/`
 * against the home directory): the service runs in another directory. Then the allocator settings that
 * let the daemon's memory return near its baseline after a load ({@link DAEMON_ALLOCATOR_ENV}; the
 * shell's own values win).
 */
export function serviceEnvironment(env: NodeJS.ProcessEnv, cwd: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (env.PATH !== undefined && env.PATH !== "") out.push(["PATH", env.PATH]);
  const mcpd = Object.keys(env)
    .filter((k) => k.startsWith("MCPD_") && env[k] !== undefined && env[k] !== "")
    .sort();
  const home = homeDirectory(env);
  for (const k of mcpd) {
    const value = env[k] as string;
    out.push([k, MCPD_PATH_VARIABLES.has(k) ? expandUserPath(value, home, cwd) : value]);
  }
  const allocator = withAllocatorEnv(env);
  for (const k of Object.keys(DAEMON_ALLOCATOR_ENV)) out.push([k, allocator[k] as string]);
  return out;
}
