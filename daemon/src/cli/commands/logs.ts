import { resolvePaths } from "@mcpd/client/paths";
import { CliError, countOption } from "../args.js";
import { eprintln, println, type CliContext, type Command } from "../context.js";
import { McpdLogs } from "@mcpd/protocol/core";
import { askDaemon, isUntrustedSocket } from "../ask-daemon.js";
import { formatLogLine } from "../log-format.js";
import { followFile, newTailLines, pause, tailFile } from "../log-follow.js";
import { terminalText } from "../terminal-text.js";

/** Polling interval of `mcpd logs SERVER -f`, in ms. */
const SERVER_POLL_MS = 500;

/** An AbortSignal that fires on SIGINT/SIGTERM, so `-f` ends cleanly. */
function interruptSignal(): { signal: AbortSignal; dispose: () => void } {
  const ac = new AbortController();
  const stop = (): void => ac.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return {
    signal: ac.signal,
    dispose: () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
    },
  };
}

/** Said (on stderr, so a pipe gets no stray line) when a server's stderr tail is empty. */
function nothingWritten(ctx: CliContext, server: string): void {
  eprintln(ctx, `server "${server}" has written nothing to stderr yet`);
}

async function serverLogs(ctx: CliContext, server: string, lines: number, follow: boolean): Promise<number> {
  // With -n 0 the daemon is still asked: an unknown server must fail, and -f needs the current tail to
  // know what is new.
  const asked = Math.max(1, lines);
  if (!follow) {
    const { lines: tail } = await askDaemon(ctx, McpdLogs, { server, lines: asked });
    if (tail.length === 0 && lines > 0) nothingWritten(ctx, server);
    for (const line of lines > 0 ? tail : []) println(ctx, terminalText(line));
    return 0;
  }
  // A session only for following: the client's session code is loaded only then.
  const { openClient } = await import("../daemon-client.js");
  const client = await openClient(ctx);
  const { signal, dispose } = interruptSignal();
  try {
    // Ask for more than we show, so a burst between polls still overlaps the previous tail.
    const window = Math.max(200, lines);
    let prev = await client.logs({ server, lines: window });
    if (prev.length === 0 && lines > 0) nothingWritten(ctx, server);
    for (const line of lines > 0 ? prev.slice(-lines) : []) println(ctx, terminalText(line));
    while (!signal.aborted) {
      await pause(SERVER_POLL_MS, signal);
      if (signal.aborted) break;
      const next = await client.logs({ server, lines: window });
      for (const line of newTailLines(prev, next)) println(ctx, terminalText(line));
      prev = next;
    }
    return 0;
  } finally {
    dispose();
    await client.close().catch(() => {});
  }
}

/** `mcpd logs`: the daemon's log, or a server's stderr. */
export const logsCommand: Command = {
  spec: {
    name: "logs",
    usage: "logs [SERVER] [-f] [-n N]",
    summary: "Show the daemon's log (pretty-printed), or one server's stderr",
    options: {
      follow: { type: "boolean", short: "f", description: "Keep printing new lines until Ctrl-C" },
      lines: { type: "string", short: "n", value: "N", description: "Lines to show first (default 50; 0: only new ones with -f)" },
    },
    minPositionals: 0,
    maxPositionals: 1,
    details: [
      "Without SERVER: the daemon's log file (MCPD_HOME or ~/.local/state/mcpd/mcpd.log), one line per",
      "entry as `time LEVEL message key=value`. It is read from the file, so it works when the daemon is",
      "down. With SERVER: that server's stderr lines, as kept by the daemon (needs the daemon).",
    ].join("\n"),
  },
  async run(ctx, { values, positionals }) {
    const lines = countOption(values, "lines", "logs", 50);
    const follow = values.follow === true;
    const server = positionals[0];
    if (server !== undefined) return serverLogs(ctx, server, lines, follow);

    const paths = resolvePaths(ctx.env, { cwd: ctx.cwd });
    const tail = await tailFile(paths.logFile, lines);
    if (!tail) {
      // A daemon in the foreground logs to stderr; it still keeps its recent lines for mcpd/logs.
      const recent = await askDaemon(ctx, McpdLogs, { lines: Math.max(1, lines) }).then(
        (r) => r.lines,
        (err: unknown) => {
          if (isUntrustedSocket(err)) throw err;
          return undefined;
        },
      );
      if (!recent) throw new CliError(`no log file at ${paths.logFile} (the daemon writes it when started with 'mcpd start')`);
      for (const line of lines > 0 ? recent : []) println(ctx, formatLogLine(line, ctx.out));
      return 0;
    }
    for (const line of tail.lines) println(ctx, formatLogLine(line, ctx.out));
    if (!follow) return 0;
    const { signal, dispose } = interruptSignal();
    try {
      await followFile(paths.logFile, tail, (line) => println(ctx, formatLogLine(line, ctx.out)), signal);
    } finally {
      dispose();
    }
    return 0;
  },
};
