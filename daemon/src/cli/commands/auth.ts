import { McpdAuthLogout, McpdAuthStart, McpdAuthWait } from "@mcpd/protocol/core";
import { println, type Command } from "../context.js";
import { askDaemon } from "../ask-daemon.js";
import { openBrowser } from "../open-browser.js";
import { RUNTIME_DEFAULTS } from "../../defaults.js";
import { terminalSafe } from "../terminal-text.js";

/**
 * `mcpd auth SERVER`: authorizes mcpd with a server's OAuth authorization server. The daemon runs the
 * flow (and keeps the tokens); this prints the URL, opens a browser where there is one, waits for the
 * daemon to see the redirect, and says which scopes were granted. `--logout` forgets the tokens and the
 * client registration.
 */
export const authCommand: Command = {
  spec: {
    name: "auth",
    usage: "auth SERVER [--logout] [--no-browser]",
    summary: "Authorize mcpd with a server that uses OAuth (or forget its tokens with --logout)",
    options: {
      logout: { type: "boolean", description: "Forget the server's tokens and client registration, and restart it" },
      "no-browser": { type: "boolean", description: "Only print the authorization URL; do not open a browser" },
    },
    minPositionals: 1,
    maxPositionals: 1,
    details: [
      "Prints the authorization URL and opens it with $BROWSER, or open / xdg-open where a display is (not",
      "over SSH). The authorization server sends the browser back to the daemon on this machine",
      "(http://127.0.0.1:<port>/callback): over SSH, open the URL in a browser that can reach that port",
      "(for example through `ssh -L <port>:127.0.0.1:<port>`). Waits up to " +
        `${Math.round(RUNTIME_DEFAULTS.authFlowTimeoutMs / 60_000)} minutes, then restarts the server with its new tokens.`,
      "Tokens live in the daemon's state directory (auth/<server>.tokens.json, mode 0600); see docs/auth.md.",
    ].join("\n"),
  },
  async run(ctx, { positionals, values }) {
    const server = positionals[0] as string;
    if (values.logout) {
      const r = terminalSafe(await askDaemon(ctx, McpdAuthLogout, { server }, { timeoutMs: 120_000 }));
      println(ctx, r.forgotten ? `forgot the tokens and client registration of ${r.server}` : `${r.server} had no tokens or registration`);
      println(ctx, `${r.server}: ${r.state}`);
      return 0;
    }
    // The wait covers the user in the browser, then the server's restart.
    const timeoutMs = RUNTIME_DEFAULTS.authFlowTimeoutMs + 120_000;
    // Two requests (the start, then the wait) on one session: the client's session code is loaded only here.
    const { withClient } = await import("../daemon-client.js");
    return withClient(
      ctx,
      async (c) => {
        const started = await c.control(McpdAuthStart, { server });
        if (started.url !== null) {
          // The URL and scopes come from the authorization server's metadata: printed escaped, like every
          // remote text; the browser gets the URL itself.
          const shown = terminalSafe(started);
          const scopes = shown.scopes.length > 0 ? ` (scopes: ${shown.scopes.join(" ")})` : "";
          println(ctx, `Authorize mcpd for ${server} in a browser${scopes}:`);
          println(ctx);
          println(ctx, `  ${shown.url}`);
          println(ctx);
          const via = values["no-browser"] ? undefined : await openBrowser(started.url, ctx.env, ctx.platform);
          if (via) println(ctx, `Opened with ${via}.`);
          else if (shown.redirectUri) println(ctx, `Open it in a browser that can reach ${shown.redirectUri} (this machine).`);
          println(ctx, "Waiting for the authorization (Ctrl-C to give up)...");
        }
        const done = terminalSafe(await c.control(McpdAuthWait, { server }));
        println(
          ctx,
          `${ctx.out.green("authorized")} ${done.server}; scopes granted: ${done.scopes.length > 0 ? done.scopes.join(" ") : "(none named)"}`,
        );
        println(ctx, `${done.server}: ${done.state}${done.state === "ready" || !done.stateReason ? "" : ` (${done.stateReason})`}`);
        return done.state === "ready" || done.state === "disabled" || done.state === "stopped" ? 0 : 1;
      },
      { timeoutMs },
    );
  },
};
