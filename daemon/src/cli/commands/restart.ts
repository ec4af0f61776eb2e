import { println, type Command } from "../context.js";
import { McpdRestart } from "@mcpd/protocol/core";
import { askDaemon } from "../ask-daemon.js";

/** `mcpd restart [SERVER]`: restart one server, or every server. */
export const restartCommand: Command = {
  spec: {
    name: "restart",
    usage: "restart [SERVER]",
    summary: "Restart one server, or all servers (the daemon itself keeps running)",
    options: {},
    minPositionals: 0,
    maxPositionals: 1,
  },
  async run(ctx, { positionals }) {
    const server = positionals[0];
    const { restarted } = await askDaemon(ctx, McpdRestart, server === undefined ? {} : { server }, { timeoutMs: 120_000 });
    println(ctx, restarted.length === 0 ? "nothing to restart (no enabled servers)" : `restarted: ${restarted.join(", ")}`);
    return 0;
  },
};
