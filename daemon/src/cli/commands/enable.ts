import { println, type Command } from "../context.js";
import { McpdEnable } from "@mcpd/protocol/core";
import { askDaemon } from "../ask-daemon.js";

/** `mcpd enable SERVER`. */
export const enableCommand: Command = {
  spec: {
    name: "enable",
    usage: "enable SERVER",
    summary: "Enable a server (it starts per its startup mode) until the next reload",
    options: {},
    minPositionals: 1,
    maxPositionals: 1,
    details: 'This changes the running daemon only; set "enabled" in the config file to make it permanent.',
  },
  async run(ctx, { positionals }) {
    const r = await askDaemon(ctx, McpdEnable, { server: positionals[0] as string }, { timeoutMs: 120_000 });
    println(ctx, `${r.server}: ${r.state}`);
    return 0;
  },
};
