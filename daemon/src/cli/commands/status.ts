import { printJson, println, type Command } from "../context.js";
import { fullStatus } from "../ask-daemon.js";
import { statusJson } from "../status-json.js";
import { renderStatus } from "../status-view.js";

/** `mcpd status`: the daemon, its servers and clients. */
export const statusCommand: Command = {
  spec: {
    name: "status",
    usage: "status [--json]",
    summary: "Show the daemon, every server (state, pid, counters, latency, errors) and connected clients",
    options: { json: { type: "boolean", description: "Print JSON (stable schema, see docs/operations.md)" } },
    minPositionals: 0,
    maxPositionals: 0,
    details:
      "Exit code 3 when the daemon is not running. Secrets (secret-named env values and headers, URL credentials, tokens) never appear.",
  },
  async run(ctx, { values }) {
    const status = statusJson(await fullStatus(ctx));
    if (values.json) printJson(ctx, status);
    else println(ctx, renderStatus(status, ctx.out, ctx.stdout.columns ?? 100));
    return 0;
  },
};
