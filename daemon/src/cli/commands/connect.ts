import { McpdError, resolvePaths } from "@mcpd/client";
import { CliError, ExitCode } from "../args.js";
import { eprintln, type Command } from "../context.js";
import { ensureDaemon } from "../daemon-process.js";
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
      "stdout carries only MCP messages; diagnostics go to stderr.",
      "",
      'Example (Claude Desktop): "mcpServers": { "mcpd": { "command": "mcpd", "args": ["connect"] } }',
    ].join("\n"),
  },
  async run(ctx, { values, positionals }) {
    const server = positionals[0];
    const selection = selectionOf(values, "connect");
    const socketPath = resolvePaths(ctx.env, { cwd: ctx.cwd }).socketPath;
    if (values["no-autostart"] !== true) {
      const r = await ensureDaemon(ctx);
      if (r.started) eprintln(ctx, `started the daemon (pid ${r.pid})`);
    }
    const { runBridge } = await import("../../socket/bridge.js");
    try {
      return await runBridge({
        socketPath,
        stdin: ctx.stdin,
        stdout: ctx.stdout,
        stderr: ctx.stderr,
        ...(server !== undefined ? { server } : {}),
        ...selection,
      });
    } catch (err) {
      if (err instanceof McpdError && err.code === "MCPD_DAEMON_UNAVAILABLE") throw new CliError(err.message, ExitCode.NotRunning);
      throw err;
    }
  },
};
