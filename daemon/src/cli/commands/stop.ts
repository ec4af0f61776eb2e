import { McpdError, resolvePaths, type McpdClient } from "@mcpd/client";
import { CliError } from "../args.js";
import { eprintln, println, type Command } from "../context.js";
import { openClient } from "../daemon-client.js";
import { isUntrustedSocket } from "../ask-daemon.js";
import { CLI_DEFAULTS } from "../cli-defaults.js";
import { readPidFile, unverifiedDaemon, waitGone } from "../daemon-process.js";
import { isPidAlive } from "../../infra/process-alive.js";

/** `mcpd stop`: graceful shutdown through the socket, SIGTERM through the pid file as a fallback. */
export const stopCommand: Command = {
  spec: {
    name: "stop",
    usage: "stop",
    summary: "Stop the daemon gracefully (its servers are closed first)",
    options: {},
    minPositionals: 0,
    maxPositionals: 0,
    details: [
      "Asks the daemon to shut down (mcpd/shutdown) and waits until its process is gone. When the socket",
      "does not answer but the pid file names a live mcpd daemon of yours, sends it SIGTERM. Not running: exit 0.",
      "A socket or socket directory another user could have made is refused (exit 1); a pid that is not",
      "verified as your own mcpd daemon is never signalled.",
    ].join("\n"),
  },
  async run(ctx) {
    const paths = resolvePaths(ctx.env, { cwd: ctx.cwd });
    // The pid reported over the (checked) socket; the pid file is only a fallback when nothing answers.
    let pid: number | undefined;
    let client: McpdClient | undefined;
    try {
      client = await openClient(ctx, { connectTimeoutMs: 3_000, timeoutMs: 5_000 });
    } catch (err) {
      // Another user's socket: their pid file beside it is theirs too. Nothing is signalled.
      if (isUntrustedSocket(err)) throw err;
      client = undefined;
    }
    if (client) {
      try {
        pid = (await client.status()).daemon.pid;
        await client.shutdown();
      } catch (err) {
        // The connection dropping as the daemon goes is expected; anything else is reported below if it stays up.
        if (!(err instanceof McpdError)) throw err;
      } finally {
        await client.close().catch(() => {});
      }
      if (pid !== undefined && (await waitGone(pid, CLI_DEFAULTS.stopTimeoutMs))) {
        println(ctx, `mcpd stopped (pid ${pid})`);
        return 0;
      }
    }
    const fromSocket = pid !== undefined;
    pid ??= readPidFile(paths);
    if (pid === undefined || !isPidAlive(pid)) {
      println(ctx, "mcpd is not running");
      return 0;
    }
    const why = unverifiedDaemon(pid, paths.socketPath);
    if (why !== undefined) {
      if (fromSocket)
        throw new CliError(`mcpd did not stop, and pid ${pid} (from mcpd/status) is not verified as your mcpd: ${why}; not signalling it`);
      // A stale pid file whose pid now belongs to something else: the daemon is not running.
      println(ctx, "mcpd is not running");
      eprintln(ctx, `not signalling pid ${pid} named by ${paths.pidFile}: ${why}. Remove that file if it is stale.`);
      return 0;
    }
    // The socket did not answer (or the daemon ignored the shutdown): fall back to the signal.
    process.kill(pid, "SIGTERM");
    if (await waitGone(pid, CLI_DEFAULTS.termTimeoutMs)) {
      println(ctx, `mcpd stopped (pid ${pid}, by SIGTERM: the socket ${client ? "shutdown did not finish" : "did not answer"})`);
      return 0;
    }
    throw new CliError(
      `mcpd (pid ${pid}) is still running ${CLI_DEFAULTS.termTimeoutMs / 1000} s after SIGTERM; ` +
        `end it with 'kill -9 ${pid}' (its servers are cleaned up at the next start)`,
    );
  },
};
