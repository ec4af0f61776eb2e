import { requestOnce } from "@mcpd/client/once";
import { McpdError, type CallToolResult } from "@mcpd/protocol/core";
import type { JsonObject } from "@mcpd/protocol/core";
import { CliError, ExitCode, intOption, parseArgPairs, parseJsonArguments } from "../args.js";
import { eprintln, printJson, println, type Command } from "../context.js";
import { cliSocketPath, commandConnectTimeoutMs, isDaemonUnavailable, notRunningError } from "../ask-daemon.js";
import { VERSION } from "../../version.js";
import { ProgressBar } from "../progress-bar.js";
import { formatToolResult } from "../result-format.js";

/** `mcpd call SERVER TOOL [JSON] [--arg k=v ...]`. */
export const callCommand: Command = {
  spec: {
    name: "call",
    usage: "call SERVER TOOL [JSON] [--arg KEY=VALUE ...] [--timeout MS] [--json]",
    summary: "Call a tool and print its result",
    options: {
      arg: {
        type: "string",
        multiple: true,
        value: "KEY=VALUE",
        description: "One argument; VALUE is parsed as JSON when it parses, else taken as a string (repeatable)",
      },
      timeout: { type: "string", value: "MS", description: "Deadline in ms, restarted by each progress notification (default 60000)" },
      json: { type: "boolean", description: "Print the raw result as JSON" },
    },
    minPositionals: 2,
    maxPositionals: 3,
    details: [
      "Arguments are a JSON object (JSON), --arg pairs, or both (--arg wins). TOOL is the server's own name.",
      "Text content is printed as is; images, audio and blobs are summarised (`[image image/png 1234 bytes]`).",
      "On a terminal a progress bar is drawn on stderr while the server reports progress.",
      "Ctrl-C cancels the call on the server (notifications/cancelled) and exits 130.",
      "Exit codes: 0 ok; 1 when the tool reports an error (isError) or the call fails; 3 daemon not running.",
      "",
      "Examples:",
      '  mcpd call fs read_file \'{"path": "/etc/hostname"}\'',
      "  mcpd call everything get-sum --arg a=1 --arg b=2",
    ].join("\n"),
  },
  async run(ctx, { values, positionals }) {
    const [server, name, json] = positionals as [string, string, string | undefined];
    const args: Record<string, unknown> = {
      ...(json !== undefined ? parseJsonArguments(json) : {}),
      ...parseArgPairs((values.arg as string[] | undefined) ?? []),
    };
    const timeout = intOption(values, "timeout", "call");
    const socketPath = cliSocketPath(ctx);
    const bar = ctx.stderr.isTTY ? new ProgressBar(ctx.stderr) : undefined;
    const ac = new AbortController();
    const onSigint = (): void => ac.abort(new Error("interrupted (SIGINT)"));
    process.once("SIGINT", onSigint);
    try {
      const result = (await requestOnce(
        "tools/call",
        { name, arguments: args as JsonObject },
        {
          socketPath,
          server,
          control: true,
          clientInfo: { name: "mcpd-cli", version: VERSION },
          connectTimeout: commandConnectTimeoutMs(ctx),
          signal: ac.signal,
          ...(timeout !== undefined ? { timeout } : {}),
          // Always asked for, so progress keeps the deadline alive; drawn only on a terminal.
          onProgress: (p) => bar?.update(p),
        },
      )) as unknown as CallToolResult;
      bar?.clear();
      if (values.json) printJson(ctx, result);
      else {
        const text = formatToolResult(result);
        if (text !== "") println(ctx, text);
      }
      return result.isError === true ? ExitCode.Failure : ExitCode.Ok;
    } catch (err) {
      bar?.clear();
      if (ac.signal.aborted) {
        eprintln(ctx, "call cancelled");
        return ExitCode.Interrupted;
      }
      if (isDaemonUnavailable(err)) throw notRunningError(socketPath, err);
      if (err instanceof McpdError) throw new CliError(err.message);
      throw err;
    } finally {
      process.off("SIGINT", onSigint);
    }
  },
};
