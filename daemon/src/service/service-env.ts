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

/**
 * Picks the variables a service must carry from the installing shell: `PATH` (so servers' commands such
 * as `npx` or `uvx` resolve as they do in the shell; services start with a minimal PATH otherwise) and
 * every `MCPD_*` variable (MCPD_HOME, MCPD_CONFIG, MCPD_SOCKET, ...), sorted by name; then the allocator
 * settings that let the daemon's memory return near its baseline after a load ({@link DAEMON_ALLOCATOR_ENV};
 * the shell's own values win).
 */
export function serviceEnvironment(env: NodeJS.ProcessEnv): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (env.PATH !== undefined && env.PATH !== "") out.push(["PATH", env.PATH]);
  const mcpd = Object.keys(env)
    .filter((k) => k.startsWith("MCPD_") && env[k] !== undefined && env[k] !== "")
    .sort();
  for (const k of mcpd) out.push([k, env[k] as string]);
  const allocator = withAllocatorEnv(env);
  for (const k of Object.keys(DAEMON_ALLOCATOR_ENV)) out.push([k, allocator[k] as string]);
  return out;
}
