import { println, type Command } from "../context.js";
import { McpdDisable } from "@mcpd/protocol/core";
import { askDaemon } from "../ask-daemon.js";

/** `mcpd disable SERVER`. */
export const disableCommand: Command = {
  spec: {
    name: "disable",
    usage: "disable SERVER",
    summary: "Disable a server (it is stopped; calls to it fail) until the next reload",
    options: {},
    minPositionals: 1,
    maxPositionals: 1,
    details: 'This changes the running daemon only; set "enabled": false in the config file to make it permanent.',
  },
  async run(ctx, { positionals }) {
    const r = await askDaemon(ctx, McpdDisable, { server: positionals[0] as string }, { timeoutMs: 120_000 });
    println(ctx, `${r.server}: ${r.state}`);
    return 0;
  },
};
