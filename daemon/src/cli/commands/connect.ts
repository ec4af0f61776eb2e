import { resolvePaths } from "@mcpd/client/paths";
import { McpdError } from "@mcpd/protocol/core";
import { CliError, ExitCode } from "../args.js";
import { CLI_DEFAULTS, envTimeoutMs } from "../cli-defaults.js";
import { eprintln, type CliContext, type Command } from "../context.js";
import { runBridge } from "../bridge.js";
import { SELECTION_OPTIONS, selectionOf } from "../selection-options.js";

/** `mcpd connect [SERVER]`: the stdio bridge an MCP client runs as its server command. */
export const connectCommand: Command = {
  spec: {
    name: "connect",
    usage: "connect [SERVER] [--profile NAME] [--tools GLOB[,GLOB]] [--no-autostart]",
    summary: "Bridge stdio to the daemon: use `mcpd connect` as the command of an MCP client's server entry",
    options: {
      ...SELECTION_OPTIONS,
      "no-autostart": { type: "boolean", description: "Do not start the daemon when it is not running (exit 3 instead)" },
    },
    minPositionals: 0,
    maxPositionals: 1,
    details: [
      "Without SERVER the client sees every server behind one MCP server (tools named <server>__<tool>);",
      "with SERVER it sees that server as it is. The daemon is started first when it is not running.",
      "--profile NAME shows only what that profile of the config selects; --tools GLOB[,GLOB] only the tools",
      "the globs match (over the aggregate names); hidden tools are absent from tools/list and refused if called.",
      "stdout carries only MCP messages; diagnostics go to stderr. A daemon that does not answer within",
      "MCPD_CONNECT_TIMEOUT_MS (10000) counts as not running. When the daemon goes away mid-session, the",
      "client's requests in flight are answered -32062 (MCPD_CONNECTION_LOST), a line goes to stderr, exit 1.",
      "",
      'Example (Claude Desktop): "mcpServers": { "mcpd": { "command": "mcpd", "args": ["connect"] } }',
    ].join("\n"),
  },
  async run(ctx, { values, positionals }) {
    const server = positionals[0];
    const selection = selectionOf(values, "connect");
    const socketPath = resolvePaths(ctx.env, { cwd: ctx.cwd }).socketPath;
    const bridge = (): Promise<number> =>
      runBridge({
        socketPath,
        stdin: ctx.stdin,
        stdout: ctx.stdout,
        stderr: ctx.stderr,
        selectTimeoutMs: envTimeoutMs(ctx.env, "MCPD_CONNECT_TIMEOUT_MS", CLI_DEFAULTS.connectTimeoutMs),
        ...(server !== undefined ? { server } : {}),
        ...selection,
      });
    try {
      // A running daemon is the common case (every agent session runs this): connect straight away, and
      // load the code that starts a daemon only when none answers. The bridge fails before reading stdin,
      // so the attempt can be repeated once the daemon is up.
      try {
        return await bridge();
      } catch (err) {
        if (values["no-autostart"] === true || !isUnavailable(err)) throw err;
      }
      await startDaemon(ctx);
      return await bridge();
    } catch (err) {
      if (isUnavailable(err)) throw new CliError((err as Error).message, ExitCode.NotRunning);
      throw err;
    }
  },
};

function isUnavailable(err: unknown): boolean {
  return err instanceof McpdError && err.code === "MCPD_DAEMON_UNAVAILABLE";
}

/** Starts the daemon (or finds one that another process started meanwhile) and says so on stderr. */
async function startDaemon(ctx: CliContext): Promise<void> {
  const { ensureDaemon } = await import("../daemon-process.js");
  const r = await ensureDaemon(ctx);
  if (r.started) eprintln(ctx, `started the daemon (pid ${r.pid})`);
}
