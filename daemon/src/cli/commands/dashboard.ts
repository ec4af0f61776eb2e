import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { resolvePaths } from "@mcpd/client/paths";
import { McpdDashboardLogin } from "@mcpd/protocol/core";
import { writePrivateFile } from "../../infra/private-file.js";
import { println, type CliContext, type Command } from "../context.js";
import { askDaemon } from "../ask-daemon.js";
import { openBrowser } from "../open-browser.js";

/**
 * A page in the state directory (0600) that sends the browser on to `url`, and its file URL: the browser
 * is started on that, never on the login link itself, which would sit in its command line (and
 * `xdg-open`'s), readable by every local user through /proc, who could use it first.
 */
function loginPage(ctx: CliContext, url: string): string {
  const file = join(resolvePaths(ctx.env, { cwd: ctx.cwd }).stateDir, "dashboard-login.html");
  const href = url.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  writePrivateFile(
    file,
    `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${href}"><title>mcpd dashboard</title><a href="${href}">mcpd dashboard</a>\n`,
  );
  return pathToFileURL(file).href;
}

/**
 * `mcpd dashboard`: opens the dashboard in the browser on a one-time login link the daemon issues (single
 * use, valid one minute), or prints the link with `--print-url`. The link sets the dashboard's session
 * cookie; no token ever appears in the address bar after it. The browser is given a private page that
 * forwards to the link (see {@link loginPage}).
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
    let page: string | undefined;
    try {
      page = loginPage(ctx, url);
    } catch {
      // No page (the state directory is not writable): the link is printed for the user to open.
    }
    const via = page !== undefined ? await openBrowser(page, ctx.env, ctx.platform) : undefined;
    if (via) println(ctx, `Opened the dashboard with ${via}.`);
    else {
      println(ctx, "Open this link in a browser on this machine (it works once, within one minute):");
      println(ctx, `  ${url}`);
    }
    return 0;
  },
};
