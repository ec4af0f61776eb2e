import { McpdDashboardLogin } from "@mcpd/protocol/core";
import { println, type Command } from "../context.js";
import { askDaemon } from "../ask-daemon.js";
import { openBrowser } from "../open-browser.js";

/**
 * `mcpd dashboard`: opens the dashboard in the browser on a one-time login link the daemon issues (single
 * use, valid one minute), or prints the link with `--print-url`. The link sets the dashboard's session
 * cookie; no token ever appears in the address bar after it.
 */
export const dashboardCommand: Command = {
  spec: {
    name: "dashboard",
    usage: "dashboard [--print-url]",
    summary: "Open the live dashboard in the browser (a one-time login link)",
    options: {
      "print-url": { type: "boolean", description: "Print the login link instead of opening a browser" },
    },
    minPositionals: 0,
    maxPositionals: 0,
    details: [
      "The daemon's HTTP front end serves the dashboard at / on loopback. The link this prints or opens works",
      "once, within one minute, and turns itself into a session cookie; run the command again for a new one.",
      "Exit code 1 when the HTTP front end is off or not listening; 3 when the daemon is not running.",
    ].join("\n"),
  },
  async run(ctx, { values }) {
    const { url } = await askDaemon(ctx, McpdDashboardLogin, {});
    if (values["print-url"]) {
      println(ctx, url);
      return 0;
    }
    const via = await openBrowser(url, ctx.env, ctx.platform);
    if (via) println(ctx, `Opened the dashboard with ${via}.`);
    else {
      println(ctx, "Open this link in a browser on this machine (it works once, within one minute):");
      println(ctx, `  ${url}`);
    }
    return 0;
  },
};
