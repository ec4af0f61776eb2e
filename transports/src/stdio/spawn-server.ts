/**
 * Starting a stdio server's process: no shell, its own process group, three pipes, and the wait for
 * Node to say whether it started. The errors thrown are the raw ones; {@link describeSpawnError} words them.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type { StdioServerConfig } from "../transport.js";
import { buildChildEnv } from "./env.js";

/** One of the child's three pipes. */
export type StdioStream = "stdin" | "stdout" | "stderr";

/**
 * Spawns the server's process in its own process group, so the whole group can be signalled at once.
 * @throws what `spawn` throws synchronously (cwd is a file: ENOTDIR, NUL bytes in args).
 */
export function spawnServer(config: StdioServerConfig): ChildProcessWithoutNullStreams {
  const { command, args = [], cwd } = config;
  return spawn(command, args, {
    cwd,
    env: buildChildEnv(config.envMode, config.env),
    stdio: ["pipe", "pipe", "pipe"],
    // Own process group, so close() can signal the server and everything it started at once.
    detached: true,
    shell: false,
    windowsHide: true,
  });
}

/**
 * Resolves once `child` has started with its pipes; `onStreamError` hears every error of a pipe from
 * now on. On failure the pipes are destroyed.
 * @throws the process's 'error' (ENOENT, EACCES, EMFILE, ...), or an Error when it started without its pipes.
 */
export async function whenSpawned(
  child: ChildProcessWithoutNullStreams,
  onStreamError: (stream: StdioStream, err: Error) => void,
): Promise<void> {
  // 'spawn' and 'error' are mutually exclusive for the launch itself: exactly one fires, on a later
  // tick. Listen before touching anything else: an 'error' nobody listens to is an uncaught exception.
  const launched = new Promise<void>((resolve, reject) => {
    const onSpawn = (): void => {
      child.off("error", onError);
      resolve();
    };
    const onError = (err: Error): void => {
      child.off("spawn", onSpawn);
      reject(err);
    };
    child.once("spawn", onSpawn);
    child.once("error", onError);
  });
  // Out of descriptors (EMFILE, ENFILE), Node fails before creating the pipes: the streams are absent.
  const streams = [child.stdin, child.stdout, child.stderr] as const;
  // Error listeners first: an EPIPE on any stdio stream must never become an uncaught exception.
  child.stdin?.on("error", (err) => onStreamError("stdin", err));
  child.stdout?.on("error", (err) => onStreamError("stdout", err));
  child.stderr?.on("error", (err) => onStreamError("stderr", err));
  try {
    await launched;
    if (streams.some((stream) => stream == null)) {
      // Never seen after 'spawn'; a process without its pipes could not be talked to anyway.
      child.kill("SIGKILL");
      throw new Error("the process started without its stdio pipes");
    }
  } catch (err) {
    for (const stream of streams) stream?.destroy();
    throw err;
  }
}
