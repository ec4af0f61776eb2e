import { println, type Command } from "../context.js";
import { McpdReload } from "@mcpd/protocol/core";
import { askDaemon } from "../ask-daemon.js";

/** `mcpd reload`: re-read the config file. */
export const reloadCommand: Command = {
  spec: {
    name: "reload",
    usage: "reload",
    summary: "Re-read the config file: start added servers, stop removed ones, restart changed ones",
    options: {},
    minPositionals: 0,
    maxPositionals: 0,
    details: "An invalid file keeps the running config (exit 1, the problem is printed). SIGHUP to the daemon does the same.",
  },
  async run(ctx) {
    const r = await askDaemon(ctx, McpdReload, undefined, { timeoutMs: 120_000 });
    const list = (xs: string[]): string => (xs.length === 0 ? "-" : xs.join(", "));
    println(ctx, `added: ${list(r.added)}`);
    println(ctx, `removed: ${list(r.removed)}`);
    println(ctx, `changed: ${list(r.changed)}`);
    println(ctx, `unchanged: ${list(r.unchanged)}`);
    for (const w of r.warnings ?? []) println(ctx, `warning: ${w}`);
    return 0;
  },
};
