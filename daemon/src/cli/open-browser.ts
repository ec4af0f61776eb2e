import { spawn } from "node:child_process";

/** How a URL is opened in a browser: a program and its arguments (the URL among them). */
export interface BrowserCommand {
  command: string;
  args: string[];
  /** For the message: `$BROWSER`, `xdg-open`, `open`. */
  via: string;
}

/**
 * How to open `url` for the user, or undefined when printing it is all that makes sense:
 * - `$BROWSER` when set (a command, its first `:`-separated entry; `%s` is replaced by the URL, else the
 *   URL is appended as the last argument; never through a shell);
 * - none over SSH (`SSH_CONNECTION`, `SSH_CLIENT` or `SSH_TTY` set): the browser is on another machine;
 * - `open` on macOS;
 * - `xdg-open` elsewhere, when a display is there (`DISPLAY` or `WAYLAND_DISPLAY`).
 */
export function browserCommand(url: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): BrowserCommand | undefined {
  const configured = env.BROWSER?.split(":")[0]?.trim();
  if (configured) {
    const words = configured.split(/\s+/);
    const withUrl = words.some((w) => w.includes("%s")) ? words.map((w) => w.replaceAll("%s", url)) : [...words, url];
    return { command: withUrl[0] as string, args: withUrl.slice(1), via: "$BROWSER" };
  }
  if (env.SSH_CONNECTION || env.SSH_CLIENT || env.SSH_TTY) return undefined;
  if (platform === "darwin") return { command: "open", args: [url], via: "open" };
  if (platform === "win32") return undefined;
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return { command: "xdg-open", args: [url], via: "xdg-open" };
  return undefined;
}

/**
 * Starts the browser on `url` (detached, output discarded; mcpd does not wait for it). Resolves with
 * how it was opened, or undefined when there was no way to (the caller printed the URL anyway) or the
 * program could not be started.
 */
export function openBrowser(url: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): Promise<string | undefined> {
  const how = browserCommand(url, env, platform);
  if (!how) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const child = spawn(how.command, how.args, { stdio: "ignore", detached: true, env });
    child.once("error", () => resolve(undefined));
    child.once("spawn", () => {
      child.unref();
      resolve(how.via);
    });
  });
}
