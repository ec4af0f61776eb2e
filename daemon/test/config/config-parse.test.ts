import { ConfigError } from "@mcpd/protocol";
import { describe, expect, it } from "vitest";
import type { LoadedConfig, ResolvedServerConfig } from "../../src/config/config-schema.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { CONFIG_DEFAULTS } from "../../src/defaults.js";

const FILE = "/cfg/config.json";
const env = { HOME: "/home/ann", GITHUB_TOKEN: "ghp_secret", PORT: "8080" };

function parse(doc: unknown, e: NodeJS.ProcessEnv = env): LoadedConfig {
  return parseConfig(typeof doc === "string" ? doc : JSON.stringify(doc), FILE, e);
}

function server(doc: unknown, name = "s", e: NodeJS.ProcessEnv = env): ResolvedServerConfig {
  const found = parse(doc, e).servers.find((s) => s.name === name);
  if (!found) throw new Error(`no server ${name}`);
  return found;
}

/** The lines of the ConfigError that parsing `doc` throws. */
function errors(doc: unknown, e: NodeJS.ProcessEnv = env): string[] {
  try {
    parse(doc, e);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe("MCPD_CONFIG_INVALID");
    return (err as Error).message.split("\n");
  }
  throw new Error("expected a ConfigError");
}

const one = (entry: unknown): unknown => ({ mcpServers: { s: entry } });

describe("parseConfig: formats", () => {
  it("resolves a stdio server with every default applied", () => {
    const s = server(one({ command: "npx", args: ["-y", "pkg"], env: { A: "1" } }));
    expect(s).toEqual({
      name: "s",
      enabled: true,
      transport: { type: "stdio", command: "npx", args: ["-y", "pkg"], env: { A: "1" }, timeout: 30_000, envMode: "allowlist" },
      timeout: CONFIG_DEFAULTS.requestTimeoutMs,
      maxTotalTimeout: CONFIG_DEFAULTS.maxTotalTimeoutMs,
      startup: "eager",
      idleTimeout: 0,
      maxConcurrency: 64,
      maxQueue: 10_000,
      restart: { maxRestarts: 5, windowMs: 60_000, initialDelayMs: 500, maxDelayMs: 30_000 },
      sharing: "shared",
      healthCheckIntervalMs: 30_000,
      roots: [],
      protocolEra: "auto",
      hash: expect.stringMatching(/^[0-9a-f]{16}$/),
      transportHash: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
  });

  it("fills args and env when absent and keeps file order", () => {
    const cfg = parse({ mcpServers: { b: { command: "x" }, a: { command: "y" } } });
    expect(cfg.servers.map((s) => s.name)).toEqual(["b", "a"]);
    expect(cfg.servers[0]!.transport).toEqual({ type: "stdio", command: "x", args: [], env: {}, timeout: 30_000, envMode: "allowlist" });
    expect(cfg.source).toBe("file");
    expect(cfg.file).toBe(FILE);
    expect(cfg.settings).toEqual({ logLevel: "info", http: HTTP_DEFAULTS });
    expect(cfg.warnings).toEqual([]);
  });

  it("resolves http, sse and ws servers, inferring the type from the url when absent", () => {
    const cfg = parse({
      mcpServers: {
        h: { type: "http", url: "https://api.example.com/mcp", headers: { Authorization: "Bearer ${GITHUB_TOKEN}" } },
        e: { type: "sse", url: "http://127.0.0.1:${PORT}/sse" },
        w: { type: "ws", url: "wss://example.com/ws" },
        u: { url: "http://localhost/mcp" },
        v: { url: "ws://localhost/mcp" },
      },
    });
    const t = Object.fromEntries(cfg.servers.map((s) => [s.name, s.transport]));
    expect(t.h).toEqual({
      type: "http",
      url: "https://api.example.com/mcp",
      headers: { Authorization: "Bearer ghp_secret" },
      timeout: 30_000,
    });
    expect(t.e).toEqual({ type: "sse", url: "http://127.0.0.1:8080/sse", headers: {}, timeout: 30_000 });
    expect(t.w).toEqual({ type: "ws", url: "wss://example.com/ws", headers: {}, timeout: 30_000 });
    expect(t.u?.type).toBe("http");
    expect(t.v?.type).toBe("ws");
  });

  it("maps Claude Code's streamable-http spellings to http and websocket to ws", () => {
    for (const type of ["streamable-http", "streamableHttp", "streamable_http"]) {
      expect(server(one({ type, url: "http://h/mcp" })).transport.type).toBe("http");
    }
    expect(server(one({ type: "websocket", url: "ws://h/" })).transport.type).toBe("ws");
  });

  it("accepts VS Code's servers key with type stdio", () => {
    const cfg = parse({ servers: { vs: { type: "stdio", command: "node", args: ["s.js"] } }, inputs: [] });
    expect(cfg.servers.map((s) => s.name)).toEqual(["vs"]);
    expect(cfg.servers[0]!.transport.type).toBe("stdio");
    expect(cfg.warnings).toEqual([]);
  });

  it("merges mcpServers and servers; a duplicate name keeps the mcpServers entry with a warning", () => {
    const cfg = parse({
      mcpServers: { a: { command: "from-mcpServers" } },
      servers: { a: { command: "from-servers" }, b: { command: "b" } },
    });
    expect(cfg.servers.map((s) => s.name)).toEqual(["a", "b"]);
    expect((cfg.servers[0]!.transport as { command: string }).command).toBe("from-mcpServers");
    expect(cfg.warnings).toEqual([`${FILE}: server "a": defined in both "mcpServers" and "servers"; using the one in "mcpServers"`]);
  });

  it("accepts comments and trailing commas (JSONC)", () => {
    const cfg = parse('{ // my servers\n "mcpServers": { "s": { "command": "x", }, },\n}');
    expect(cfg.servers).toHaveLength(1);
  });

  it("an empty mcpServers object or an empty document object means zero servers", () => {
    expect(parse({ mcpServers: {} }).servers).toEqual([]);
    expect(parse({}).servers).toEqual([]);
  });

  it("resolves a relative cwd against the config file's directory and ~ against HOME", () => {
    expect(server(one({ command: "x", cwd: "proj" })).transport).toMatchObject({ cwd: "/cfg/proj" });
    expect(server(one({ command: "x", cwd: "~/w" })).transport).toMatchObject({ cwd: "/home/ann/w" });
    expect(server(one({ command: "x", cwd: "/abs" })).transport).toMatchObject({ cwd: "/abs" });
  });
});

describe("parseConfig: variables", () => {
  it("expands ${VAR} and ${VAR:-default} in command, args, env, cwd, url and headers", () => {
    const s = server(
      one({
        command: "${HOME}/bin/srv",
        args: ["--port", "${PORT}", "--mode=${MODE:-fast}"],
        env: { TOKEN: "${GITHUB_TOKEN}", LEVEL: "${LEVEL:-info}" },
        cwd: "${HOME}/work",
      }),
    );
    expect(s.transport).toMatchObject({
      command: "/home/ann/bin/srv",
      args: ["--port", "8080", "--mode=fast"],
      env: { TOKEN: "ghp_secret", LEVEL: "info" },
      cwd: "/home/ann/work",
    });
  });

  it("an unset variable without a default is an error naming the server, the key and the variable", () => {
    expect(errors(one({ command: "x", env: { TOKEN: "${NOT_SET}" } }))).toEqual([
      `${FILE}: server "s": "env.TOKEN": environment variable NOT_SET is not set (set it, or write \${NOT_SET:-default} for a fallback)`,
    ]);
  });

  it("an unset variable in a disabled server is only a warning", () => {
    const cfg = parse(one({ command: "x", enabled: false, args: ["${NOT_SET}"] }));
    expect(cfg.servers[0]!.enabled).toBe(false);
    expect(cfg.servers[0]!.transport).toMatchObject({ args: [""] });
    expect(cfg.warnings[0]).toMatch(/server "s": "args\[0\]": environment variable NOT_SET is not set; the server is disabled/);
  });

  it("regression: a url built from an unset variable is reported once (not also as an invalid URL), and only warned about for a disabled server", () => {
    expect(errors(one({ url: "${NOT_SET}/mcp" }))).toEqual([
      `${FILE}: server "s": "url": environment variable NOT_SET is not set (set it, or write \${NOT_SET:-default} for a fallback)`,
    ]);
    const cfg = parse(one({ url: "${NOT_SET}/mcp", enabled: false }));
    expect(cfg.servers[0]!.enabled).toBe(false);
    expect(cfg.warnings).toEqual([
      `${FILE}: server "s": "url": environment variable NOT_SET is not set; the server is disabled, so it is left empty`,
    ]);
  });

  it("unsetVariables defer (import's check): ${VAR:-default} resolves, an unset ${VAR} is a warning and stays as written, other errors remain", () => {
    const cfg = parseConfig(
      JSON.stringify({
        mcpServers: {
          api: { type: "http", url: "${API_BASE_URL:-https://api.example.com}/mcp" },
          gw: { url: "${GATEWAY_URL}/mcp", headers: { Authorization: "Bearer ${TOKEN}" } },
          tool: { command: "${TOOL_BIN}", env: { K: "${K}" } },
        },
      }),
      FILE,
      env,
      { unsetVariables: "defer" },
    );
    expect(cfg.servers.map((s) => s.transport)).toMatchObject([
      { type: "http", url: "https://api.example.com/mcp" },
      { type: "http", url: "${GATEWAY_URL}/mcp", headers: { Authorization: "Bearer ${TOKEN}" } },
      { type: "stdio", command: "${TOOL_BIN}", env: { K: "${K}" } },
    ]);
    expect(cfg.warnings).toEqual([
      `${FILE}: server "gw": "url" uses \${GATEWAY_URL}, which is not set here: the daemon needs it in its environment`,
      `${FILE}: server "gw": "headers.Authorization" uses \${TOKEN}, which is not set here: the daemon needs it in its environment`,
      `${FILE}: server "tool": "command" uses \${TOOL_BIN}, which is not set here: the daemon needs it in its environment`,
      `${FILE}: server "tool": "env.K" uses \${K}, which is not set here: the daemon needs it in its environment`,
    ]);
    expect(() => parseConfig(JSON.stringify(one({ url: "mcp.example.com/mcp" })), FILE, env, { unsetVariables: "defer" })).toThrow(
      `${FILE}: server "s": "url" is not a valid URL: "mcp.example.com/mcp"`,
    );
  });

  it("$${VAR} is a literal ${VAR}", () => {
    expect(server(one({ command: "x", args: ["$${HOME}"] })).transport).toMatchObject({ args: ["${HOME}"] });
  });

  it("does not expand foreign keys, so a VS Code ${input:...} elsewhere does not fail", () => {
    expect(server(one({ command: "x", description: "${input:x}" })).enabled).toBe(true);
  });
});

describe("parseConfig: mcpd keys", () => {
  it("takes every mcpd key from the server entry", () => {
    const s = server(
      one({
        command: "x",
        enabled: false,
        timeout: 5000,
        maxTotalTimeout: 60_000,
        startup: "lazy",
        idleTimeout: 120_000,
        maxConcurrency: 4,
        maxQueue: 0,
        restart: { maxRestarts: 2, initialDelayMs: 100 },
        sharing: "per-client",
        healthCheckIntervalMs: 0,
        roots: [{ uri: "file:///repo", name: "repo" }, "/abs/dir", "~/home-dir"],
        envMode: "inherit",
      }),
    );
    expect(s).toMatchObject({
      enabled: false,
      timeout: 5000,
      maxTotalTimeout: 60_000,
      startup: "lazy",
      idleTimeout: 120_000,
      maxConcurrency: 4,
      maxQueue: 0,
      restart: { maxRestarts: 2, windowMs: 60_000, initialDelayMs: 100, maxDelayMs: 30_000 },
      sharing: "per-client",
      healthCheckIntervalMs: 0,
      roots: [{ uri: "file:///repo", name: "repo" }, { uri: "file:///abs/dir" }, { uri: "file:///home/ann/home-dir" }],
    });
    expect(s.transport).toMatchObject({ timeout: 5000, envMode: "inherit" });
  });

  it("applies mcpd.defaults under per-server values, and reads mcpd.logLevel", () => {
    const cfg = parse({
      mcpd: { logLevel: "debug", defaults: { timeout: 60_000, startup: "lazy", restart: { maxRestarts: 1 } } },
      mcpServers: { a: { command: "x" }, b: { command: "y", timeout: 1000, restart: { windowMs: 1000 } } },
    });
    expect(cfg.settings.logLevel).toBe("debug");
    const [a, b] = cfg.servers;
    expect(a).toMatchObject({ timeout: 60_000, startup: "lazy", restart: { maxRestarts: 1, windowMs: 60_000 } });
    expect(b).toMatchObject({ timeout: 1000, startup: "lazy", restart: { maxRestarts: 1, windowMs: 1000 } });
  });

  it("envMode: allowlist by default; mcpd.defaults.envMode applies to every stdio server, a server's own wins; misplaced mcpd.envMode is named", () => {
    expect(server(one({ command: "x" })).transport).toMatchObject({ envMode: "allowlist" });
    const cfg = parse({
      mcpd: { defaults: { envMode: "inherit" } },
      mcpServers: { a: { command: "x" }, b: { command: "y", envMode: "allowlist" } },
    });
    expect(cfg.servers.map((s) => (s.transport as { envMode?: string }).envMode)).toEqual(["inherit", "allowlist"]);
    const misplaced = parse({ mcpd: { envMode: "inherit" }, mcpServers: { a: { command: "x" } } });
    expect(misplaced.warnings).toEqual([
      `${FILE}: "mcpd.envMode" is ignored: per-server keys for every server go in "mcpd.defaults" ("mcpd": {"defaults": {"envMode": ...}})`,
    ]);
    expect(misplaced.servers[0]!.transport).toMatchObject({ envMode: "allowlist" });
  });

  it("logLevel per server: absent by default (the daemon's level, and the hash it had before the key existed); mcpd.defaults.logLevel for every server, a server's own wins; a bad one is named with a hint", () => {
    const plain = server(one({ command: "x" }));
    expect(plain).not.toHaveProperty("logLevel");
    expect(CONFIG_DEFAULTS.serverLogLevel).toBeNull();
    const cfg = parse({
      mcpd: { logLevel: "warn", defaults: { logLevel: "info" } },
      mcpServers: { a: { command: "x" }, b: { command: "x", logLevel: "debug" } },
    });
    expect(cfg.settings.logLevel).toBe("warn");
    expect(cfg.servers.map((s) => s.logLevel)).toEqual(["info", "debug"]);
    // A level is part of the server's config (a reload sees it changed) but not of what it talks to.
    const debug = server(one({ command: "x", logLevel: "debug" }));
    expect(debug.hash).not.toBe(plain.hash);
    expect(debug.transportHash).toBe(plain.transportHash);
    expect(errors(one({ command: "x", logLevel: "verbose" }))).toContain(
      `${FILE}: server "s": "logLevel" must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent", got "verbose"`,
    );
    expect(errors(one({ command: "x", logLevel: "debg" })).join("\n")).toMatch(/got "debg".*debug/);
  });

  it('protocolEra per server: "auto" by default (the hash it had before the key existed); "2025" or "2026" forces the era, in an entry or mcpd.defaults; a bad one is named with the values it takes', () => {
    const plain = server(one({ command: "x" }));
    expect(plain.protocolEra).toBe("auto");
    expect(server(one({ command: "x", protocolEra: "auto" })).hash).toBe(plain.hash);
    const cfg = parse({
      mcpd: { defaults: { protocolEra: "2025" } },
      mcpServers: { a: { command: "x" }, b: { command: "x", protocolEra: "2026" } },
    });
    expect(cfg.servers.map((s) => s.protocolEra)).toEqual(["2025", "2026"]);
    const forced = server(one({ command: "x", protocolEra: "2026" }));
    expect(forced.hash).not.toBe(plain.hash);
    expect(forced.transportHash).toBe(plain.transportHash);
    expect(errors(one({ command: "x", protocolEra: 2026 }))).toContain(
      `${FILE}: server "s": "protocolEra" must be one of "auto", "2025", "2026", got 2026`,
    );
    expect(parse(one({ command: "x", era: "2026" })).warnings.join("\n")).toMatch(/unknown key "era".*protocolEra/);
  });

  it("reads the daemon's limits from mcpd (maxConnections, fdReserve, maxBufferedBytesTotal, partialLineTimeoutMs), only when set", () => {
    expect(parse({ mcpServers: {} }).settings).toEqual({ logLevel: "info", http: HTTP_DEFAULTS });
    const cfg = parse({
      mcpd: { maxConnections: 3, fdReserve: 0, maxBufferedBytesTotal: 2_000_000, partialLineTimeoutMs: 500 },
      mcpServers: {},
    });
    expect(cfg.settings).toEqual({
      logLevel: "info",
      http: HTTP_DEFAULTS,
      maxConnections: 3,
      fdReserve: 0,
      maxBufferedBytesTotal: 2_000_000,
      partialLineTimeoutMs: 500,
    });
    expect(cfg.warnings).toEqual([]);
  });

  it("rejects bad daemon limits, naming each", () => {
    expect(
      errors({ mcpd: { maxConnections: 0, fdReserve: -1, maxBufferedBytesTotal: 1024, partialLineTimeoutMs: "30s" }, mcpServers: {} }),
    ).toEqual([
      `${FILE}: "mcpd.maxConnections" must be an integer from 1 to 1000000, got 0`,
      `${FILE}: "mcpd.fdReserve" must be an integer from 0 to 1000000, got -1`,
      `${FILE}: "mcpd.maxBufferedBytesTotal" must be an integer of at least 65536 (bytes), got 1024`,
      `${FILE}: "mcpd.partialLineTimeoutMs" must be an integer from 1 to 2147483647 (milliseconds), got "30s"`,
    ]);
    expect(errors({ mcpd: { maxConnections: 2.5 }, mcpServers: {} })).toEqual([
      `${FILE}: "mcpd.maxConnections" must be an integer from 1 to 1000000, got 2.5`,
    ]);
  });

  it("raises the default maxTotalTimeout to a larger timeout, but rejects an explicit one below it", () => {
    expect(server(one({ command: "x", timeout: 600_000 })).maxTotalTimeout).toBe(600_000);
    expect(errors(one({ command: "x", timeout: 600_000, maxTotalTimeout: 1000 }))).toEqual([
      `${FILE}: server "s": "maxTotalTimeout" (1000 ms) must not be less than "timeout" (600000 ms)`,
    ]);
  });

  it("honours Cline's disabled: true, and rejects a contradiction with enabled", () => {
    expect(server(one({ command: "x", disabled: true })).enabled).toBe(false);
    expect(server(one({ command: "x", disabled: false })).enabled).toBe(true);
    expect(errors(one({ command: "x", disabled: true, enabled: true }))[0]).toMatch(/"enabled": true contradicts "disabled": true/);
  });

  it("warns that a timeout under a second is probably seconds", () => {
    const cfg = parse(one({ command: "x", timeout: 60 }));
    expect(cfg.servers[0]!.timeout).toBe(60);
    expect(cfg.warnings).toEqual([`${FILE}: server "s": "timeout" is 60 ms; mcpd timeouts are in milliseconds (did you mean 60000?)`]);
  });
});

describe("parseConfig: errors", () => {
  it("a bad value names the file, the server, the key, what is expected and what was given", () => {
    expect(errors(one({ command: "x", timeout: "abc" }))).toEqual([
      `${FILE}: server "s": "timeout" must be a positive integer (milliseconds), got "abc"`,
    ]);
  });

  it("rejects timer values Node cannot honour", () => {
    expect(errors(one({ command: "x", idleTimeout: 2 ** 31 }))[0]).toMatch(
      /"idleTimeout" must be an integer >= 0 \(milliseconds; 0 = never\) of at most 2147483647/,
    );
  });

  it("reports every problem of the file at once, one per line", () => {
    const lines = errors({
      mcpServers: {
        a: { command: "x", timeout: -1, startup: "later", args: "not-an-array" },
        "bad name!": { command: "y" },
        c: { url: "ftp://x" },
      },
      mcpd: { logLevel: "loud" },
    });
    expect(lines).toEqual([
      `${FILE}: "mcpd.logLevel" must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent", got "loud"`,
      `${FILE}: server "a": "timeout" must be a positive integer (milliseconds), got -1`,
      `${FILE}: server "a": "startup" must be one of "eager", "lazy", got "later"`,
      `${FILE}: server "a": "args" must be an array of strings, got a string`,
      `${FILE}: server "bad name!": invalid name: use 1 to 48 letters, digits, "_" or "-" (for example "bad_name_")`,
      `${FILE}: server "c": "url" must start with http:// or https:// for "type": "http", got "ftp://..."`,
    ]);
  });

  it("enforces the server name rule", () => {
    for (const ok of ["a", "A-b_9", "x".repeat(48)]) expect(parse({ mcpServers: { [ok]: { command: "x" } } }).servers).toHaveLength(1);
    for (const bad of ["", "x".repeat(49), "my.server", "has space", "colon:name", "ünï"]) {
      expect(errors({ mcpServers: { [bad]: { command: "x" } } })[0]).toContain(`server "${bad}": invalid name`);
    }
  });

  it("needs exactly one of command and url, consistent with type", () => {
    expect(errors(one({}))[0]).toMatch(/server "s": needs "command" \(a local process\) or "url" \(a remote server\)/);
    expect(errors(one({ command: "x", url: "http://h" }))[0]).toMatch(/has both "command" and "url"/);
    expect(errors(one({ type: "stdio", url: "http://h" }))[0]).toMatch(/"type" is "stdio" but there is no "command"/);
    expect(errors(one({ type: "http", command: "x" }))[0]).toMatch(/"type" is "http" but it has "command" instead of "url"/);
    expect(errors(one({ type: "grpc", command: "x" }))[0]).toMatch(/"type" must be one of .*got "grpc"/);
    expect(errors(one({ type: "htp", url: "http://h" }))[0]).toMatch(/\(did you mean "http"\?\)/);
    expect(errors(one({ command: "" }))[0]).toMatch(/"command" must be a non-empty string/);
    expect(errors(one({ command: ["npx"] }))[0]).toMatch(/"command" must be a non-empty string, got an array/);
    expect(errors(one("npx foo"))[0]).toMatch(/server "s": must be an object with "command"/);
  });

  it("checks url schemes per type", () => {
    expect(errors(one({ type: "ws", url: "http://h" }))[0]).toMatch(
      /"url" must start with ws:\/\/ or wss:\/\/ for "type": "ws", got "http:\/\/..."/,
    );
    expect(errors(one({ type: "sse", url: "ws://h" }))[0]).toMatch(/"url" must start with http:\/\/ or https:\/\/ for "type": "sse"/);
    expect(errors(one({ url: "not a url" }))[0]).toMatch(/"url" is not a valid URL/);
    expect(errors(one({ url: 42 }))[0]).toMatch(/"url" must be a string, got 42/);
  });

  it("args must be strings; env and headers records of strings, without echoing their values", () => {
    expect(errors(one({ command: "x", args: ["a", 3] }))).toEqual([`${FILE}: server "s": "args[1]" must be a string, got 3 (write "3")`]);
    expect(errors(one({ command: "x", env: { PORT: 3000 } }))).toEqual([
      `${FILE}: server "s": "env.PORT" must be a string, got a number (put the value in quotes)`,
    ]);
    expect(errors(one({ command: "x", env: ["A=1"] }))[0]).toMatch(/"env" must be an object of string values, got an array/);
    expect(errors(one({ url: "http://h", headers: { "Bad Name": "v" } }))[0]).toMatch(/"headers" has an invalid name "Bad Name"/);
    expect(errors(one({ url: "http://h", headers: { X: "a\r\nInjected: 1" } }))[0]).toMatch(/"headers.X" must not contain line breaks/);
  });

  it("rejects bad mcpd values of every kind", () => {
    const lines = errors(
      one({
        command: "x",
        enabled: "yes",
        maxConcurrency: 0,
        maxQueue: 1.5,
        sharing: "global",
        healthCheckIntervalMs: -5,
        envMode: "none",
        restart: { maxRestarts: -1, initialDelayMs: 5000, maxDelayMs: 100 },
        roots: [{ uri: "relative/dir" }, 5],
      }),
    );
    expect(lines).toEqual([
      `${FILE}: server "s": "enabled" must be true or false, got "yes"`,
      `${FILE}: server "s": "maxConcurrency" must be an integer from 1 to 10000, got 0`,
      `${FILE}: server "s": "maxQueue" must be an integer from 0 to 1000000, got 1.5`,
      `${FILE}: server "s": "sharing" must be one of "shared", "per-client", got "global"`,
      `${FILE}: server "s": "healthCheckIntervalMs" must be an integer >= 0 (milliseconds; 0 disables), got -5`,
      `${FILE}: server "s": "envMode" must be one of "inherit", "allowlist", got "none"`,
      `${FILE}: server "s": "restart.maxRestarts" must be an integer >= 0, got -1`,
      `${FILE}: server "s": "roots[0].uri" must be a file:// URI or an absolute path, got "relative/dir"`,
      `${FILE}: server "s": "roots[1]" must be an object like {"uri": "file:///path", "name": "..."}, got 5`,
      `${FILE}: server "s": "restart.maxDelayMs" (100 ms) must not be less than "restart.initialDelayMs" (5000 ms)`,
    ]);
  });

  it("rejects a top level that is not an object, and sections that are not objects", () => {
    expect(errors("[]")).toEqual([`${FILE}: the top level must be a JSON object such as {"mcpServers": {}}, got an empty array`]);
    expect(errors({ mcpServers: [] })).toEqual([
      `${FILE}: "mcpServers" must be an object mapping server names to server entries, got an empty array`,
    ]);
    expect(errors({ mcpd: "x" })[0]).toMatch(/"mcpd" must be an object/);
    expect(errors({ mcpd: { defaults: { timeout: "slow" } } })).toEqual([
      `${FILE}: "mcpd.defaults": "timeout" must be a positive integer (milliseconds), got "slow"`,
    ]);
  });

  it("names the file and line:column of invalid JSON", () => {
    expect(errors('{"mcpServers": {"a": {"command": "x",, }}}')).toEqual([
      `${FILE}:1:38: invalid JSON: expected a double-quoted property name or "}", found ","`,
    ]);
  });
});

describe("parseConfig: warnings", () => {
  it("warns about unknown keys with a did-you-mean hint, without failing", () => {
    const cfg = parse(one({ command: "x", timout: 5000, max_queue: 3, timeoutMs: 1, zzzzzz: 1, restart: { maxRestart: 1 } }));
    expect(cfg.servers).toHaveLength(1);
    expect(cfg.servers[0]!.timeout).toBe(30_000);
    expect(cfg.warnings).toEqual([
      `${FILE}: server "s": unknown key "timout" ignored (did you mean "timeout"?)`,
      `${FILE}: server "s": unknown key "max_queue" ignored (did you mean "maxQueue"?)`,
      `${FILE}: server "s": unknown key "timeoutMs" ignored (did you mean "timeout"?)`,
      `${FILE}: server "s": unknown key "zzzzzz" ignored`,
      `${FILE}: server "s": unknown key "restart.maxRestart" ignored (did you mean "maxRestarts"?)`,
    ]);
  });

  it("warns about unknown top-level and mcpd keys, and a server placed at the top level", () => {
    const cfg = parse({ mcpServer: {}, github: { command: "x" }, mcpd: { loglevel: "info" } });
    expect(cfg.warnings).toEqual([
      `${FILE}: unknown top-level key "mcpServer" ignored (did you mean "mcpServers"?)`,
      `${FILE}: top-level key "github" looks like a server and is ignored; put it inside "mcpServers"`,
      `${FILE}: unknown key "mcpd.loglevel" ignored (did you mean "logLevel"?)`,
    ]);
  });

  it("accepts other tools' keys silently and warns about keys that do not apply", () => {
    expect(parse(one({ command: "x", autoApprove: [], alwaysAllow: [], description: "d" })).warnings).toEqual([]);
    expect(parse(one({ command: "x", headers: {} })).warnings).toEqual([`${FILE}: server "s": "headers" is ignored for a stdio server`]);
    expect(parse(one({ url: "http://h", env: {}, envMode: "allowlist" })).warnings).toEqual([
      `${FILE}: server "s": "env" is ignored for a remote (url) server`,
      `${FILE}: server "s": "envMode" is ignored for a remote (url) server`,
    ]);
    expect(parse(one({ command: "x", envFile: ".env" })).warnings[0]).toMatch(/"envFile" is not supported and is ignored/);
  });

  it("warns about a duplicate server name within one section", () => {
    const cfg = parse('{"mcpServers": {"a": {"command": "one"}, "a": {"command": "two"}}}');
    expect(cfg.servers).toHaveLength(1);
    expect(cfg.warnings).toEqual([`${FILE}:1:42: duplicate key "a" in "mcpServers"; the last one wins`]);
  });
});

describe("parseConfig: result", () => {
  it("is deeply frozen: mutation throws in strict mode", () => {
    const cfg = parse({ mcpServers: { s: { command: "x", args: ["a"], env: { A: "1" }, roots: ["/r"] } } });
    const s = cfg.servers[0]!;
    expect(Object.isFrozen(cfg)).toBe(true);
    expect(() => (cfg.servers as ResolvedServerConfig[]).push(s)).toThrow(TypeError);
    expect(() => {
      (s as { timeout: number }).timeout = 1;
    }).toThrow(TypeError);
    expect(() => {
      (s.transport as { args: string[] }).args[0] = "b";
    }).toThrow(TypeError);
    expect(() => {
      (s.transport as { env: Record<string, string> }).env.B = "2";
    }).toThrow(TypeError);
    expect(() => {
      (s.restart as { maxRestarts: number }).maxRestarts = 0;
    }).toThrow(TypeError);
    expect(() => (cfg.warnings as string[]).push("x")).toThrow(TypeError);
    expect(Object.isFrozen(s.roots[0])).toBe(true);
    expect(Object.isFrozen(cfg.settings)).toBe(true);
  });

  it("hashes are stable across key order and formatting, and change with the config", () => {
    const a = server('{"mcpServers": {"s": {"command": "x", "args": ["1"], "env": {"A": "1", "B": "2"}}}}');
    const b = server('{"mcpServers": {\n "s": {"env": {"B": "2", "A": "1"}, "args": ["1"], "command": "x"}}}');
    expect(b.hash).toBe(a.hash);
    expect(b.transportHash).toBe(a.transportHash);
    // Renaming keeps the hash: it describes the server, not its name.
    expect(server(one({ command: "x", args: ["1"], env: { A: "1", B: "2" } })).hash).toBe(a.hash);

    const timeoutChanged = server(one({ command: "x", args: ["1"], env: { A: "1", B: "2" }, timeout: 1000 }));
    expect(timeoutChanged.hash).not.toBe(a.hash);
    // The transport identity (which process, which tools) ignores the timeout.
    expect(timeoutChanged.transportHash).toBe(a.transportHash);

    const envChanged = server(one({ command: "x", args: ["1"], env: { A: "1", B: "3" } }));
    expect(envChanged.hash).not.toBe(a.hash);
    expect(envChanged.transportHash).not.toBe(a.transportHash);
    // A changed environment variable changes the expanded config, so the hash too.
    const viaVar = (token: string) => server(one({ command: "x", env: { T: "${TOK}" } }), "s", { TOK: token }).hash;
    expect(viaVar("one")).not.toBe(viaVar("two"));
  });
});

/** `mcpd.http` with nothing set: on, on loopback, the documented port. */
const HTTP_DEFAULTS = {
  enabled: true,
  port: 7767,
  host: "127.0.0.1",
  allowRemote: false,
  allowedHosts: [],
  maxSessions: 256,
  sessionIdleMs: 1_800_000,
  streamAfterMs: 50,
  requestTimeoutMs: 30_000,
};

describe("mcpd.http", () => {
  it("reads every key and names the wrong ones with what they must be", () => {
    // Every key set to something other than its default.
    const http = {
      enabled: false,
      port: 0,
      host: "::1",
      allowedHosts: ["mybox.local"],
      maxSessions: 4,
      sessionIdleMs: 5_000,
      streamAfterMs: 0,
      requestTimeoutMs: 500,
    };
    const cfg = parse({ mcpd: { http }, mcpServers: {} });
    expect(cfg.settings.http).toEqual({ ...HTTP_DEFAULTS, ...http });
    expect(() => parse({ mcpd: { http: { streamAfterMs: -1 } }, mcpServers: {} })).toThrow(
      /"mcpd.http.streamAfterMs" must be an integer from 0 to 60000 \(milliseconds; 0: always stream\), got -1/,
    );
    for (const bad of [99, 600_001, 1.5, "30000"]) {
      expect(() => parse({ mcpd: { http: { requestTimeoutMs: bad } }, mcpServers: {} })).toThrow(
        /"mcpd.http.requestTimeoutMs" must be an integer from 100 to 600000 \(milliseconds\)/,
      );
    }
    expect(() => parse({ mcpd: { http: { port: 70_000 } }, mcpServers: {} })).toThrow(
      /"mcpd.http.port" must be an integer from 0 to 65535/,
    );
    expect(() => parse({ mcpd: { http: { enabled: "yes" } }, mcpServers: {} })).toThrow(/"mcpd.http.enabled" must be true or false/);
    expect(() => parse({ mcpd: { http: "on" }, mcpServers: {} })).toThrow(/"mcpd.http" must be an object/);
    expect(parse({ mcpd: { http: { prot: 1 } }, mcpServers: {} }).warnings.join("\n")).toMatch(
      /unknown key "mcpd.http.prot" ignored.*port/,
    );
  });
});

describe("mcpd.telemetry.otlp", () => {
  it("is absent unless set; set, every key is resolved from the defaults; a bad endpoint or key is named", () => {
    expect(parse({ mcpServers: {} }).settings.telemetry).toBeUndefined();
    expect(parse({ mcpd: { telemetry: {} }, mcpServers: {} }).settings.telemetry).toBeUndefined();
    const endpoint = "http://127.0.0.1:4318/v1/traces";
    expect(parse({ mcpd: { telemetry: { otlp: { endpoint } } }, mcpServers: {} }).settings.telemetry).toEqual({
      otlp: { endpoint, headers: {}, serviceName: "mcpd", batchDelayMs: 1_000, exportTimeoutMs: 10_000, maxQueueSpans: 2_048 },
    });
    const otlp = {
      endpoint,
      headers: { "x-api-key": "k" },
      serviceName: "mcpd-laptop",
      batchDelayMs: 5,
      exportTimeoutMs: 500,
      maxQueueSpans: 10,
    };
    expect(parse({ mcpd: { telemetry: { otlp } }, mcpServers: {} }).settings.telemetry).toEqual({ otlp });
    for (const bad of ["127.0.0.1:4318", "ftp://collector/v1/traces", 4318]) {
      expect(() => parse({ mcpd: { telemetry: { otlp: { endpoint: bad } } }, mcpServers: {} })).toThrow(
        /"mcpd.telemetry.otlp.endpoint" must be an http\(s\) URL/,
      );
    }
    expect(() => parse({ mcpd: { telemetry: { otlp: {} } }, mcpServers: {} })).toThrow(/"mcpd.telemetry.otlp.endpoint"/);
    expect(() => parse({ mcpd: { telemetry: { otlp: { endpoint, batchDelayMs: 0 } } }, mcpServers: {} })).toThrow(
      /"mcpd.telemetry.otlp.batchDelayMs" must be an integer from 1 to 60000/,
    );
    expect(parse({ mcpd: { telemetry: { otlp: { endpoint, endpiont: 1 } } }, mcpServers: {} }).warnings.join("\n")).toMatch(
      /unknown key "mcpd.telemetry.otlp.endpiont" ignored/,
    );
  });
});
