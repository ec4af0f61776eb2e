import { describe, expect, it } from "vitest";
import type { DaemonStatus } from "@mcpd/client";
import type { ServerState } from "@mcpd/protocol";
import { palette } from "../../src/cli/format.js";
import { statusJson } from "../../src/cli/status-json.js";
import { renderStatus, stateNote } from "../../src/cli/status-view.js";
import { redactUrlCredentials } from "../../src/secrets/index.js";
import { commandHelp, overviewHelp } from "../../src/cli/help.js";

const raw = {
  daemon: {
    pid: 10,
    version: "1.2.3",
    uptimeMs: 65_000,
    socketPath: "/s/mcpd.sock",
    configFile: "/c.json",
    logFile: "/l.log",
    startedAt: "2025-01-01T00:00:00.000Z",
    extra: "ignored",
  },
  servers: [
    {
      name: "fs",
      state: "ready",
      enabled: true,
      transport: "stdio",
      mode: "stdio",
      tools: 3,
      pid: 11,
      startedAt: "2025-01-01T00:00:01.000Z",
      uptimeMs: 64_000,
      restarts: 1,
      requests: 40,
      errors: 2,
      inFlight: 0,
      latencyMs: { p50: 1.25, p95: 12, p99: 30 },
      lastError: "connect to http://bob:hunter2@host failed",
      lastStderr: "warming up",
      stateReason: "started",
      commandFound: true,
      sessions: 0,
      era: "2026",
    },
    {
      name: "gone",
      state: "failed",
      enabled: true,
      transport: "stdio",
      mode: null,
      tools: 0,
      pid: null,
      startedAt: null,
      uptimeMs: null,
      restarts: 5,
      requests: 0,
      errors: 0,
      inFlight: 0,
      latencyMs: { p50: null, p95: null, p99: null },
      lastError: null,
      lastStderr: null,
      stateReason: "crash loop: 5 restarts in 60000ms",
      commandFound: false,
    },
    {
      name: "web",
      state: "starting",
      enabled: true,
      transport: "http",
      mode: "streamable-http",
      tools: 0,
      pid: null,
      startedAt: null,
      uptimeMs: null,
      restarts: 0,
      requests: 0,
      errors: 0,
      inFlight: 0,
      latencyMs: { p50: null, p95: null, p99: null },
      lastError: null,
      lastStderr: null,
      stateReason: null,
      commandFound: null,
    },
  ],
  clients: [
    {
      id: "c1",
      view: "aggregate",
      server: null,
      clientInfo: { name: "claude", version: "2" },
      inFlight: 1,
      connectedAt: "2025-01-01T00:00:02.000Z",
    },
  ],
  tables: { inFlight: 1 },
} as unknown as DaemonStatus;

describe("statusJson", () => {
  it("picks the documented fields only, redacting URL credentials", () => {
    const s = statusJson(raw);
    expect(Object.keys(s)).toEqual(["daemon", "servers", "clients", "http"]);
    expect(s.http).toBeNull();
    expect(s.daemon).toEqual({
      pid: 10,
      version: "1.2.3",
      startedAt: "2025-01-01T00:00:00.000Z",
      uptimeMs: 65_000,
      socketPath: "/s/mcpd.sock",
      configFile: "/c.json",
      logFile: "/l.log",
      socketProblem: null,
      logDroppedLines: 0,
      logWriteError: null,
    });
    expect(s.servers[0]?.lastError).toBe("connect to http://bob:***@host failed");
    expect(s.servers[1]).toMatchObject({ mode: null, pid: null, commandFound: false, latencyMs: { p50: null, p95: null, p99: null } });
    expect(s.clients).toEqual([
      {
        id: "c1",
        name: "claude",
        version: "2",
        view: "aggregate",
        server: null,
        profile: null,
        tools: null,
        inFlight: 1,
        connectedAt: "2025-01-01T00:00:02.000Z",
        face: "socket",
      },
    ]);
    expect(JSON.stringify(s)).not.toContain("hunter2");
  });

  it("shows the HTTP front end: its URL, token file and sessions, or why it is not serving", () => {
    const http = {
      enabled: true,
      url: "http://127.0.0.1:7767/mcp",
      tokenFile: "/s/http-token",
      listening: true,
      error: null,
      sessions: 2,
      legacySessions: 1,
    };
    const withHttp = {
      ...raw,
      http: {
        ...http,
        addresses: [],
        maxSessions: 256,
        expired: 0,
        refused: 0,
        slowReaders: 0,
        replayBytes: 0,
        bufferedBytes: 0,
        dropped: { overBudget: 0, replayTrims: 0, droppedEvents: 0, bodyTooLarge: 0, bodyTimeout: 0, tooManyRequests: 0 },
      },
    } as DaemonStatus;
    const s = statusJson(withHttp);
    expect(s.http).toEqual(http);
    expect(renderStatus(s, palette(false))).toMatch(/^http +http:\/\/127\.0\.0\.1:7767\/mcp +\(token in \/s\/http-token; 3 sessions\)$/m);
    const down = statusJson({
      ...withHttp,
      http: { ...withHttp.http!, url: null, listening: false, error: "port 7767 on 127.0.0.1 is in use (EADDRINUSE)" },
    });
    expect(renderStatus(down, palette(false))).toMatch(/^http +not serving: port 7767 on 127\.0\.0\.1 is in use/m);
  });

  it("redactUrlCredentials masks passwords only", () => {
    expect(redactUrlCredentials("see https://u:p@x.org/a and ftp://x.org")).toBe("see https://u:***@x.org/a and ftp://x.org");
    expect(redactUrlCredentials("mail bob@example.com")).toBe("mail bob@example.com");
  });
});

describe("renderStatus", () => {
  it("renders the daemon, an aligned server table, problems and clients", () => {
    const text = renderStatus(statusJson(raw), palette(false));
    const lines = text.split("\n");
    expect(lines[0]).toBe("mcpd 1.2.3  pid 10  up 1m 5s");
    expect(text).toMatch(/^SERVER +STATE +TRANSPORT +PID +UPTIME +RESTARTS +REQS +ERRS +INFL +P50 +P95 +P99 +TOOLS +ERA$/m);
    expect(text).toMatch(/^fs +ready +stdio +11 +1m 4s +1 +40 +2 +0 +1\.3ms +12\.0ms +30\.0ms +3 +2026$/m);
    expect(text).toMatch(/^web +starting +http \(streamable-http\) +-/m);
    expect(text).toContain("! gone: command not found on the daemon's PATH");
    expect(text).toContain("  gone: failed: crash loop: 5 restarts in 60000ms");
    expect(text).toContain("  fs: last error: connect to http://bob:***@host failed");
    // A ready server's stderr is not a problem.
    expect(text).not.toContain("warming up");
    expect(text).toMatch(/^c1 +socket +claude 2 +aggregate +- +1 /m);
    // Columns line up: each header starts where its cells start.
    const header = lines.find((l) => l.startsWith("SERVER")) as string;
    const row = lines.find((l) => l.startsWith("fs ")) as string;
    expect(row.indexOf("ready")).toBe(header.indexOf("STATE"));
  });

  it("regression: a starting server is no problem line, a disabled one is said once (was `starting: started`, `disabled: disabled`)", () => {
    const server = raw.servers[0] as unknown as Record<string, unknown>;
    const at = (name: string, state: string, stateReason: string, more: Record<string, unknown> = {}) => ({
      ...server,
      name,
      state,
      stateReason,
      lastError: null,
      lastStderr: null,
      ...more,
    });
    const text = renderStatus(
      statusJson({
        ...raw,
        servers: [
          at("everything", "starting", "started", { pid: 77, lastStderr: "Starting default (STDIO) server..." }),
          at("paused", "disabled", "disabled"),
          at("configoff", "disabled", ""),
          at("byhand", "disabled", "disabled by 'mcpd disable'; 'mcpd enable byhand' starts it again"),
          at("down", "restarting", "session closed: exit 1; restart 1/5 in 200 ms", { lastStderr: "Error: boom" }),
        ],
      } as unknown as DaemonStatus),
      palette(false),
    );
    expect(text).toMatch(/^everything +starting +stdio +77 /m);
    expect(text).not.toMatch(/^ +everything:/m);
    expect(text).not.toMatch(/^ +paused:/m);
    expect(text).not.toMatch(/^ +configoff:/m);
    expect(text).not.toContain("disabled: disabled");
    expect(text).toContain("  byhand: disabled by 'mcpd disable'; 'mcpd enable byhand' starts it again\n");
    expect(text).toContain("  down: restarting: session closed: exit 1; restart 1/5 in 200 ms\n");
    expect(text).toContain("  down: stderr: Error: boom");
  });

  it("shows a needs-auth server in red with its whole reason, the command to run at its end, even on a narrow terminal", () => {
    const server = raw.servers[0] as unknown as Record<string, unknown>;
    const reason = "the refresh token was refused (invalid_grant): run `mcpd auth linear-with-a-long-name`";
    const s = statusJson({
      ...raw,
      servers: [
        { ...server, name: "linear-with-a-long-name", state: "needs-auth", stateReason: reason, lastError: null, lastStderr: null },
      ],
    } as unknown as DaemonStatus);
    expect(renderStatus(s, palette(false), 40)).toContain(`  linear-with-a-long-name: needs-auth: ${reason}\n`);
    expect(renderStatus(s, palette(true))).toContain("\u001b[31mneeds-auth\u001b[39m");
  });

  it.each([
    ["starting", "started", undefined],
    ["starting", "started on demand", undefined],
    ["ready", "started", undefined],
    ["stopped", "idle for 60000 ms", undefined],
    ["disabled", "", undefined],
    ["disabled", "disabled", undefined],
    ["disabled", "Disabled by 'mcpd disable'", "Disabled by 'mcpd disable'"],
    ["disabled", "by the config (enabled: false)", "disabled (by the config (enabled: false))"],
    ["failed", "crash loop", "failed: crash loop"],
    ["failed", "failed to spawn: ENOENT", "failed to spawn: ENOENT"],
    ["failed", "", "failed"],
    ["restarting", "session closed", "restarting: session closed"],
  ])("stateNote(%s, %j) is %j", (state, stateReason, expected) => {
    expect(stateNote({ state: state as ServerState, stateReason })).toBe(expected);
  });

  it("colours states only when the palette is on", () => {
    expect(renderStatus(statusJson(raw), palette(false))).not.toContain("\u001b[");
    expect(renderStatus(statusJson(raw), palette(true))).toContain("\u001b[31mfailed\u001b[39m");
  });

  it("shows each client's profile and one-off tool globs, in the table and in --json", () => {
    const clients = [
      { ...raw.clients[0], id: "c2", profile: "coding", tools: null },
      { ...raw.clients[0], id: "c3", profile: "coding", tools: ["a__*", "*__search"] },
      { ...raw.clients[0], id: "c4", profile: null, tools: ["a__echo"] },
    ];
    const st = statusJson({ ...raw, clients } as unknown as DaemonStatus);
    expect(st.clients.map((c) => [c.id, c.profile, c.tools])).toEqual([
      ["c2", "coding", null],
      ["c3", "coding", ["a__*", "*__search"]],
      ["c4", null, ["a__echo"]],
    ]);
    const text = renderStatus(st, palette(false));
    expect(text).toMatch(/^c2 +socket +claude 2 +aggregate +coding +1 /m);
    expect(text).toMatch(/^c3 +socket +claude 2 +aggregate +coding \+ tools a__\*,\*__search +1 /m);
    expect(text).toMatch(/^c4 +socket +claude 2 +aggregate +tools a__echo +1 /m);
  });

  it("says when there are no servers or clients", () => {
    const text = renderStatus(statusJson({ ...raw, servers: [], clients: [] }), palette(false));
    expect(text).toContain("No servers configured");
    expect(text).toContain("Clients: none connected");
  });
});

describe("help", () => {
  it("renders a command's usage and options, and the overview", () => {
    const spec = {
      name: "logs",
      usage: "logs [SERVER]",
      summary: "Show logs",
      options: {
        follow: { type: "boolean" as const, short: "f", description: "Follow" },
        lines: { type: "string" as const, short: "n", value: "N", description: "Lines" },
      },
      minPositionals: 0,
      maxPositionals: 1,
    };
    expect(commandHelp(spec).split("\n")).toEqual([
      "Usage: mcpd logs [SERVER]",
      "",
      "Show logs",
      "",
      "Options:",
      "  -f, --follow   Follow",
      "  -n, --lines N  Lines",
      "  -h, --help     Show this help",
    ]);
    const overview = overviewHelp([spec, { ...spec, name: "secret", hidden: true }], "9.9.9");
    expect(overview).toContain("mcpd 9.9.9");
    expect(overview).toContain("  logs  Show logs");
    expect(overview).not.toContain("secret");
  });
});

describe("status: socket problems", () => {
  it("reports a socket file the daemon had to re-create, in --json and in the table", () => {
    const withProblem = {
      ...raw,
      daemon: {
        ...raw.daemon,
        socket: {
          path: "/s/mcpd.sock",
          recreated: 1,
          lastProblem: "socket file removed; re-created",
          lastProblemAt: "2025-01-01T00:00:02.000Z",
        },
      },
    } as unknown as DaemonStatus;
    const s = statusJson(withProblem);
    expect(s.daemon.socketProblem).toEqual({ problem: "socket file removed; re-created", at: "2025-01-01T00:00:02.000Z", recreated: 1 });
    expect(renderStatus(s, palette(false))).toContain(
      "socket problem at 2025-01-01T00:00:02.000Z: socket file removed; re-created (re-created 1x)",
    );
    expect(statusJson(raw as unknown as DaemonStatus).daemon.socketProblem).toBeNull();
  });

  it("reports log lines dropped (full disk, closed stderr) in --json and as one line, only when there are any", () => {
    const log = {
      droppedLines: 12,
      lastError: "ENOSPC: no space left on device, write",
      lastErrorAt: "2025-01-01T00:00:03.000Z",
      failing: true,
    };
    const s = statusJson({ ...raw, daemon: { ...raw.daemon, log } } as unknown as DaemonStatus);
    expect(s.daemon.logDroppedLines).toBe(12);
    expect(s.daemon.logWriteError).toEqual({
      message: "ENOSPC: no space left on device, write",
      at: "2025-01-01T00:00:03.000Z",
      ongoing: true,
    });
    expect(renderStatus(s, palette(false))).toContain("log: 12 lines dropped (still failing: ENOSPC: no space left on device, write)");
    const recovered = statusJson({
      ...raw,
      daemon: { ...raw.daemon, log: { ...log, droppedLines: 1, failing: false } },
    } as unknown as DaemonStatus);
    expect(renderStatus(recovered, palette(false))).toContain("log: 1 line dropped (last error: ENOSPC: no space left on device, write)");
    const none = statusJson({
      ...raw,
      daemon: { ...raw.daemon, log: { droppedLines: 0, lastError: null, lastErrorAt: null, failing: false } },
    } as unknown as DaemonStatus);
    expect(none.daemon).toMatchObject({ logDroppedLines: 0, logWriteError: null });
    expect(renderStatus(none, palette(false))).not.toMatch(/dropped/);
  });
});
