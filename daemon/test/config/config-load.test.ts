import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ConfigError } from "@mcpd/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assertConfigFileExists, explicitConfigOrigin, loadConfig } from "../../src/config/load-config.js";
import { CONFIG_DEFAULTS } from "../../src/defaults.js";

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "mcpd-cfg-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function loadError(promise: Promise<unknown>): Promise<ConfigError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as ConfigError).code).toBe("MCPD_CONFIG_INVALID");
  return err as ConfigError;
}

describe("loadConfig", () => {
  it("a missing file is valid: zero servers, source none, frozen", async () => {
    const file = path.join(dir, "absent.json");
    const cfg = await loadConfig({ file, env: {} });
    expect(cfg).toEqual({
      file,
      source: "none",
      servers: [],
      settings: { logLevel: "info", http: expect.objectContaining({ enabled: true, port: 7767 }) },
      warnings: [],
    });
    expect(Object.isFrozen(cfg.servers)).toBe(true);
  });

  it("a missing file is an error when required (a --config the user named)", async () => {
    const file = path.join(dir, "typo.json");
    const err = await loadError(loadConfig({ file, env: {}, required: true }));
    expect(err.message).toBe(`${file}: cannot read config file: config file not found (ENOENT)`);
    const named = await loadError(loadConfig({ file, env: {}, required: true, namedBy: "MCPD_CONFIG" }));
    expect(named.message).toBe(
      `${file}: cannot read config file: config file not found (ENOENT); it is named by MCPD_CONFIG, and a config file named there must exist`,
    );
  });

  it("a config file is explicit when named by --config or a non-empty MCPD_CONFIG; such a file must exist", async () => {
    expect(explicitConfigOrigin({}, "x.json")).toBe("--config");
    expect(explicitConfigOrigin({ MCPD_CONFIG: "/a.json" }, "x.json")).toBe("--config");
    expect(explicitConfigOrigin({ MCPD_CONFIG: "/a.json" })).toBe("MCPD_CONFIG");
    expect(explicitConfigOrigin({ MCPD_CONFIG: "" })).toBeUndefined();
    expect(explicitConfigOrigin({ MCPD_CONFIG_DIR: "/c" })).toBeUndefined();
    const file = path.join(dir, "typo.json");
    expect((await loadError(assertConfigFileExists(file, "--config"))).message).toMatch(
      /typo\.json: cannot read config file: config file not found \(ENOENT\); it is named by --config/,
    );
    expect((await loadError(assertConfigFileExists(dir, "--config"))).message).toBe(
      `${dir}: is a directory, not a config file (named by --config)`,
    );
    await writeFile(file, "{}");
    await assertConfigFileExists(file, "--config");
  });

  it("reads and resolves a real file, expanding variables from the given env", async () => {
    const file = path.join(dir, "config.json");
    await writeFile(file, JSON.stringify({ mcpServers: { echo: { command: "node", args: ["${SCRIPT}"], cwd: "srv" } } }));
    const cfg = await loadConfig({ file, env: { SCRIPT: "echo.js" } });
    expect(cfg.source).toBe("file");
    expect(cfg.file).toBe(file);
    expect(cfg.servers[0]!.transport).toMatchObject({ command: "node", args: ["echo.js"], cwd: path.join(dir, "srv") });
  });

  it("resolves a relative file against the working directory", async () => {
    const cfg = await loadConfig({ file: "definitely-not-here.json", env: {} });
    expect(cfg.file).toBe(path.resolve("definitely-not-here.json"));
  });

  it("finds the file through MCPD_CONFIG and MCPD_CONFIG_DIR when no file is given", async () => {
    const viaDir = path.join(dir, "conf");
    await mkdir(viaDir);
    await writeFile(path.join(viaDir, "config.json"), '{"mcpServers": {"a": {"command": "x"}}}');
    const fromDir = await loadConfig({ env: { MCPD_CONFIG_DIR: viaDir } });
    expect(fromDir.file).toBe(path.join(viaDir, "config.json"));
    expect(fromDir.servers.map((s) => s.name)).toEqual(["a"]);

    const explicit = path.join(dir, "other.json");
    await writeFile(explicit, '{"servers": {"b": {"type": "stdio", "command": "y"}}}');
    const fromVar = await loadConfig({ env: { MCPD_CONFIG_DIR: viaDir, MCPD_CONFIG: explicit } });
    expect(fromVar.servers.map((s) => s.name)).toEqual(["b"]);
  });

  it("names the file and line:column of invalid JSON", async () => {
    const file = path.join(dir, "config.json");
    await writeFile(file, '{\n  "mcpServers": {\n    "a": { "command": "x" }\n  }\n');
    const err = await loadError(loadConfig({ file, env: {} }));
    expect(err.message).toBe(`${file}:5:1: invalid JSON: expected "," or "}" in object, found the end of the file`);
  });

  it("reports every invalid value of the file in one error", async () => {
    const file = path.join(dir, "config.json");
    await writeFile(file, JSON.stringify({ mcpServers: { github: { command: "x", timeout: "abc" }, web: { url: "ftp://h" } } }));
    const err = await loadError(loadConfig({ file, env: {} }));
    expect(err.message.split("\n")).toEqual([
      `${file}: server "github": "timeout" must be a positive integer (milliseconds), got "abc"`,
      `${file}: server "web": "url" must start with http:// or https:// for "type": "http", got "ftp://..."`,
    ]);
  });

  it("refuses a directory, a file over the size limit and text that is not UTF-8", async () => {
    expect((await loadError(loadConfig({ file: dir, env: {} }))).message).toBe(`${dir}: is a directory, not a config file`);

    const big = path.join(dir, "big.json");
    await writeFile(big, `{"mcpServers": {}, "pad": "${"x".repeat(CONFIG_DEFAULTS.maxConfigFileBytes)}"}`);
    expect((await loadError(loadConfig({ file: big, env: {} }))).message).toMatch(/over the limit of 4194304 bytes/);

    const latin1 = path.join(dir, "latin1.json");
    await writeFile(latin1, Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d])); // {"é":1} in Latin-1
    expect((await loadError(loadConfig({ file: latin1, env: {} }))).message).toBe(`${latin1}: config file is not valid UTF-8 text`);
  });

  it("names an unreadable path and the reason", async () => {
    const file = path.join(dir, "plain-file");
    await writeFile(file, "{}");
    const below = path.join(file, "config.json");
    const err = await loadError(loadConfig({ file: below, env: {} }));
    expect(err.message).toBe(`${below}: cannot read config file: a parent of the path is not a directory (ENOTDIR)`);
  });

  it("accepts a file saved with a BOM and CRLF line endings", async () => {
    const file = path.join(dir, "config.json");
    await writeFile(file, '\ufeff{\r\n  "mcpServers": {\r\n    "a": { "command": "x" }\r\n  }\r\n}\r\n');
    expect((await loadConfig({ file, env: {} })).servers).toHaveLength(1);
  });
});
