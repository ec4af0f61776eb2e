import { DaemonUnavailableError } from "@mcpd/protocol/core";
import { CLIENT_DEFAULTS } from "./defaults.js";

/**
 * How to start the daemon when its socket does not answer.
 * - `false` (default): never start it; fail with `MCPD_DAEMON_UNAVAILABLE`.
 * - `true`: run `$MCPD_BIN` (default `mcpd`) with `["start"]`. The CLI detaches the daemon and exits once
 *   its socket answers.
 * - `{ command, args }`: run that instead. It must exit once the daemon is up (or leave it starting).
 *
 * A command ending in `.js`, `.mjs` or `.cjs` is run with the current Node (`process.execPath`).
 */
export type AutostartOption = boolean | { command: string; args: string[] };

/** The command line {@link runAutostart} would run for `option`, or `undefined` for `false`. */
export function autostartCommand(
  option: AutostartOption | undefined,
  env: NodeJS.ProcessEnv = process.env,
): { command: string; args: string[] } | undefined {
  if (!option) return undefined;
  const spec = option === true ? { command: env.MCPD_BIN || "mcpd", args: ["start"] } : option;
  if (typeof spec.command !== "string" || spec.command === "" || !Array.isArray(spec.args)) {
    throw new TypeError("autostart must be false, true or { command: string, args: string[] }");
  }
  if (/\.[cm]?js$/.test(spec.command)) return { command: process.execPath, args: [spec.command, ...spec.args] };
  return { command: spec.command, args: [...spec.args] };
}

/**
 * Runs the autostart command and waits for it to exit.
 *
 * @param socketPath when given, passed to the command as `MCPD_SOCKET` so the daemon listens where the
 * caller will connect (only needed when the caller chose a socket path explicitly).
 * @param timeoutMs how long the command may run, in ms (default {@link CLIENT_DEFAULTS.autostartTimeoutMs});
 * past it the command is sent SIGTERM.
 * @throws DaemonUnavailableError (`MCPD_DAEMON_UNAVAILABLE`) when the command cannot be run, exits
 * non-zero (its output tail is in the message) or does not exit in time.
 */
export async function runAutostart(
  option: AutostartOption,
  options: { socketPath?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<void> {
  const baseEnv = options.env ?? process.env;
  const cmd = autostartCommand(option, baseEnv);
  if (!cmd) return;
  // Loaded here, not with the module: node:child_process costs a few ms of the start of every process that
  // uses the client (each `mcpd status` and `mcpd call`), and a daemon that answers is never started.
  const { spawn } = await import("node:child_process");
  const timeoutMs = options.timeoutMs ?? CLIENT_DEFAULTS.autostartTimeoutMs;
  const env = options.socketPath ? { ...baseEnv, MCPD_SOCKET: options.socketPath } : baseEnv;
  const shown = [cmd.command, ...cmd.args].join(" ");
  return new Promise((resolve, reject) => {
    const child = spawn(cmd.command, cmd.args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const keep = (chunk: Buffer): void => {
      // Only the tail matters for the error message; bounded so a chatty command cannot grow it.
      output = (output + chunk.toString("utf8")).slice(-CLIENT_DEFAULTS.autostartStderrBytes);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const timer = setTimeout(() => {
      child.kill("SIGTERM");
      finish(new DaemonUnavailableError(`Autostart \`${shown}\` did not finish within ${timeoutMs}ms.${tail(output)}`));
    }, timeoutMs);
    let done = false;
    const finish = (err?: Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      // The detached daemon may have inherited nothing from these pipes, but a misbehaving command might
      // hand them on; never let them keep this process alive.
      child.stdout.destroy();
      child.stderr.destroy();
      if (err) reject(err);
      else resolve();
    };
    child.once("error", (err: NodeJS.ErrnoException) => {
      const why =
        err.code === "ENOENT"
          ? `command not found: ${cmd.command}. Install mcpd, set MCPD_BIN to its path, or pass autostart: { command, args }.`
          : err.message;
      finish(new DaemonUnavailableError(`Autostart \`${shown}\` failed: ${why}`, { cause: err }));
    });
    // `exit`, not `close`: the daemon the command detaches could keep inherited pipes open for its life.
    child.once("exit", (code, signal) => {
      if (code === 0) finish();
      else
        finish(
          new DaemonUnavailableError(
            `Autostart \`${shown}\` exited with ${code === null ? `signal ${signal}` : `code ${code}`}.${tail(output)}`,
          ),
        );
    });
  });
}

function tail(output: string): string {
  const text = output.trim();
  return text ? ` Output: ${text}` : "";
}
