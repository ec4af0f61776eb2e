import { McpdError, resolvePaths } from "@mcpd/client";
import { CliError } from "../args.js";
import { println, type Command } from "../context.js";
import { openClient } from "../daemon-client.js";
import { CLI_DEFAULTS, isAlive, looksLikeMcpd, readPidFile, waitGone } from "../daemon-process.js";

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
      "does not answer but the pid file names a live mcpd process, sends it SIGTERM. Not running: exit 0.",
    ].join("\n"),
  },
  async run(ctx) {
    const paths = resolvePaths(ctx.env, { cwd: ctx.cwd });
    let pid: number | undefined;
    let client;
    try {
      client = await openClient(ctx, { connectTimeoutMs: 3_000, timeoutMs: 5_000 });
    } catch {
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
    pid ??= readPidFile(paths);
    if (pid === undefined || !isAlive(pid) || !looksLikeMcpd(pid)) {
      println(ctx, "mcpd is not running");
      return 0;
    }
    // The socket did not answer (or the daemon ignored the shutdown): fall back to the signal.
    process.kill(pid, "SIGTERM");
    if (await waitGone(pid, CLI_DEFAULTS.termTimeoutMs)) {
      println(ctx, `mcpd stopped (pid ${pid}, by SIGTERM: the socket ${client ? "shutdown did not finish" : "did not answer"})`);
      return 0;
    }
    throw new CliError(`mcpd (pid ${pid}) is still running ${CLI_DEFAULTS.termTimeoutMs / 1000} s after SIGTERM; end it with 'kill -9 ${pid}' (its servers are cleaned up at the next start)`);
  },
};
