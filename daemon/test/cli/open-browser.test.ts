import { describe, expect, it } from "vitest";
import { browserCommand } from "../../src/cli/open-browser.js";

const URL_ = "https://auth.example.com/authorize?client_id=x&state=y";

describe("how `mcpd auth` opens the authorization URL", () => {
  it("uses $BROWSER first (its first entry; %s replaced, else the URL appended), never through a shell", () => {
    expect(browserCommand(URL_, { BROWSER: "firefox --new-tab" }, "linux")).toEqual({
      command: "firefox",
      args: ["--new-tab", URL_],
      via: "$BROWSER",
    });
    expect(browserCommand(URL_, { BROWSER: "w3m %s:lynx" }, "linux")).toEqual({ command: "w3m", args: [URL_], via: "$BROWSER" });
    // Set explicitly, it is used over SSH too.
    expect(browserCommand(URL_, { BROWSER: "lynx", SSH_CONNECTION: "1 2 3 4" }, "linux")?.command).toBe("lynx");
  });

  it("opens nothing over SSH or without a display: printing the URL is enough there", () => {
    expect(browserCommand(URL_, { DISPLAY: ":0", SSH_CONNECTION: "1 2 3 4" }, "linux")).toBeUndefined();
    expect(browserCommand(URL_, { SSH_TTY: "/dev/pts/1" }, "darwin")).toBeUndefined();
    expect(browserCommand(URL_, {}, "linux")).toBeUndefined();
  });

  it("uses open on macOS and xdg-open where there is a display", () => {
    expect(browserCommand(URL_, {}, "darwin")).toEqual({ command: "open", args: [URL_], via: "open" });
    expect(browserCommand(URL_, { DISPLAY: ":0" }, "linux")).toEqual({ command: "xdg-open", args: [URL_], via: "xdg-open" });
    expect(browserCommand(URL_, { WAYLAND_DISPLAY: "wayland-0" }, "freebsd")?.command).toBe("xdg-open");
  });
});
