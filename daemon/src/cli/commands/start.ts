import { resolvePaths } from "@mcpd/client/paths";
import { McpdError } from "@mcpd/protocol/core";
import { RUNTIME_DEFAULTS } from "../../defaults.js";
import { LOG_LEVELS, assertConfigFileExists, explicitConfigOrigin } from "../../config/index.js";
import { CliError, stringOption, UsageError } from "../args.js";
import { eprintln, println, type Command } from "../context.js";
import { ensureDaemon } from "../daemon-process.js";
import { foregroundReexecPlan, runForegroundChild, watchForegroundParent } from "../foreground-reexec.js";

/** Log levels `--log-level` accepts: the config's. */
const LEVELS: readonly string[] = LOG_LEVELS;

/** `mcpd start`: start the daemon detached (default) or run it in this process. */
export const startCommand: Command = {
  spec: {
    name: "start",
    usage: "start [--config FILE] [--foreground] [--log-level LEVEL]",
    summary: "Start the daemon (detached), or run it in the foreground",
    options: {
      config: { type: "string", value: "FILE", description: "Config file (default: MCPD_CONFIG, else ~/.config/mcpd/config.json)" },
      foreground: { type: "boolean", description: "Run in this process and log to stderr (for systemd and debugging)" },
      "log-level": { type: "string", value: "LEVEL", description: `Log level: ${LEVELS.join(", ")} (default: the config's, else info)` },
      "in-process": {
        type: "boolean",
        description: "Run in this process but log to the log file, as a detached daemon does (used by `start` and the launchd agent)",
      },
    },
    minPositionals: 0,
    maxPositionals: 0,
    details: [
      "Without --foreground the daemon is started in the background; the command waits until its socket",
      "answers (up to 10 s), prints the socket path and pid, and exits 0. If a daemon is already running it",
      "says so and exits 0. If the daemon fails to come up, the reason from its log is printed (exit 1).",
      "A config file named with --config or MCPD_CONFIG must exist (exit 1 naming it); the default one may be",
      "absent (the daemon then runs with no servers).",
      "With --foreground the daemon runs as a child of this process, started once with the allocator",
      "settings and node flags every daemon mcpd launches has (unless this node already has them, or",
      "MCPD_FOREGROUND_REEXEC=0): signals are passed on to it, and this process exits with its exit code.",
      "`mcpd status` and the pid file name the daemon's own pid.",
    ].join("\n"),
  },
  async run(ctx, { values }) {
    const configFile = stringOption(values, "config");
    const logLevel = stringOption(values, "log-level");
    if (logLevel !== undefined && !LEVELS.includes(logLevel)) {
      throw new UsageError(`--log-level must be one of ${LEVELS.join(", ")}, got ${JSON.stringify(logLevel)}`, "start");
    }
    // Before anything is started or created: a named config file that is missing is a typo, not "no servers".
    const namedBy = explicitConfigOrigin(ctx.env, configFile);
    if (namedBy) {
      const file = resolvePaths(ctx.env, { cwd: ctx.cwd, ...(configFile ? { configFile } : {}) }).configFile;
      await assertConfigFileExists(file, namedBy).catch((err: unknown) => {
        throw err instanceof McpdError ? new CliError(err.message) : err;
      });
    }
    if (values.foreground || values["in-process"]) {
      const foreground = values.foreground === true;
      if (foreground) {
        const plan = foregroundReexecPlan(ctx.env, process.execArgv, process.pid);
        const args = [
          "start",
          "--foreground",
          ...(configFile ? ["--config", configFile] : []),
          ...(logLevel ? ["--log-level", logLevel] : []),
        ];
        if (plan) return runForegroundChild(ctx, plan, args);
        watchForegroundParent(ctx.env);
      }
      try {
        // Loaded here so that other commands do not pay for loading the whole daemon.
        const { runDaemon } = await import("../../daemon.js");
        const code = await runDaemon({ foreground, ...(configFile ? { configFile } : {}), ...(logLevel ? { logLevel } : {}) });
        // The daemon has ended every part; a write to a stopped terminal it could not cancel must not keep
        // the process alive: it exits anyway, discarding that output.
        setTimeout(() => process.exit(code), RUNTIME_DEFAULTS.exitLingerMs).unref();
        return code;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        // Not a failure: a service manager must not restart-loop against a daemon someone else started.
        if ((err as { code?: unknown }).code === "MCPD_ALREADY_RUNNING") {
          eprintln(ctx, message);
          return 0;
        }
        if (foreground) eprintln(ctx, message);
        // Detached, stderr is the log file: write a pino-shaped line so `mcpd start` and `mcpd logs` show it.
        else
          ctx.stderr.write(
            `${JSON.stringify({
              level: 60,
              time: Date.now(),
              pid: process.pid,
              msg: `mcpd failed to start: ${message}`,
              code: (err as { code?: unknown }).code,
            })}\n`,
          );
        return 1;
      }
    }
    const r = await ensureDaemon(ctx, { ...(configFile ? { configFile } : {}), ...(logLevel ? { logLevel } : {}) });
    if (r.started) {
      println(ctx, `mcpd started (pid ${r.pid})`);
    } else {
      println(ctx, `mcpd is already running (pid ${r.pid})`);
    }
    println(ctx, `socket: ${r.socketPath}`);
    if (r.started) println(ctx, `log: ${r.logFile}`);
    return 0;
  },
};
