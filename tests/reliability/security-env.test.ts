/**
 * What a stdio server's process sees of the daemon's environment. By default only an allowlist (what a
 * CLI needs to run: PATH, HOME, locale, temp dir, proxy and CA-bundle settings) plus the server's own
 * `env`: a token the user exported for one server (GITHUB_TOKEN) never reaches the others. `envMode:
 * "inherit"`, per server or in `mcpd.defaults`, passes the whole environment. Real daemon, real fixture
 * servers reporting `process.env`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fixture, startTestDaemon, until, type RawClient, type TestDaemon } from "../e2e/harness.js";

/** The daemon's environment: secrets the user exported, plus variables every server may need. */
const DAEMON_ENV = {
  GITHUB_TOKEN: "secret-x",
  SOME_OTHER: "1",
  LANG: "C.UTF-8",
  LC_CTYPE: "C.UTF-8",
  TMPDIR: tmpdir(),
  HTTPS_PROXY: "http://proxy.example:3128",
  https_proxy: "http://proxy.example:3128",
  NO_PROXY: "localhost,127.0.0.1",
  NODE_EXTRA_CA_CERTS: "/etc/ssl/extra-ca.pem",
  SSL_CERT_FILE: "/etc/ssl/cert.pem",
};

let daemon: TestDaemon | undefined;
let dir: string | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Starts a daemon on `doc` (a whole config document, so `mcpd.defaults` can be set) with {@link DAEMON_ENV}. */
async function start(doc: Record<string, unknown>): Promise<{ d: TestDaemon; c: RawClient }> {
  dir = mkdtempSync(join(tmpdir(), "mcpd-env-"));
  const configFile = join(dir, "config.json");
  writeFileSync(configFile, JSON.stringify(doc));
  const d = (daemon = await startTestDaemon({}, { env: { ...DAEMON_ENV, MCPD_CONFIG: configFile } }));
  const c = await d.raw();
  await c.initialize();
  const names = Object.keys(doc.mcpServers as object);
  await until(
    async () => {
      const servers: Array<{ name: string; state: string }> = (await c.request("mcpd/status")).result.servers;
      return names.every((n) => servers.find((s) => s.name === n)?.state === "ready");
    },
    `${names.join(", ")} ready`,
    30_000,
  );
  return { d, c };
}

/** The environment the server `name`'s process has. */
async function envOf(c: RawClient, name: string): Promise<Record<string, string>> {
  const r = await c.request("tools/call", { name: "env", arguments: {}, _meta: { "mcpd/server": name } });
  const text = r.result?.content?.[0]?.text;
  if (typeof text !== "string") throw new Error(`env of ${name}: ${JSON.stringify(r)}`);
  return JSON.parse(text);
}

describe("the environment of stdio servers", () => {
  it("regression: a server with no env configured does not see the daemon's GITHUB_TOKEN (default allowlist); envMode inherit per server does; its own env always arrives", async () => {
    const { c } = await start({
      mcpServers: {
        plain: fixture("plain"),
        own: fixture("own", [], { env: { OWN_TOKEN: "mine", SOME_OTHER: "overridden" } }),
        inherit: fixture("inherit", [], { envMode: "inherit", env: { OWN_TOKEN: "theirs" } }),
      },
    });

    const plain = await envOf(c, "plain");
    expect(plain.GITHUB_TOKEN, "another server's token").toBeUndefined();
    expect(plain.SOME_OTHER).toBeUndefined();
    // What a CLI needs to run: the SDK's list, locale, temp dir, proxy and CA bundles.
    expect(plain.PATH).toBe(process.env.PATH);
    expect(plain.HOME).toBe(process.env.HOME);
    for (const [k, v] of Object.entries(DAEMON_ENV)) if (k !== "GITHUB_TOKEN" && k !== "SOME_OTHER") expect(plain[k], k).toBe(v);
    // Nothing of the daemon's own settings either.
    expect(plain.MCPD_HOME).toBeUndefined();
    expect(plain.MCPD_CONFIG).toBeUndefined();

    const own = await envOf(c, "own");
    expect(own.OWN_TOKEN).toBe("mine");
    expect(own.SOME_OTHER).toBe("overridden");
    expect(own.GITHUB_TOKEN).toBeUndefined();

    const inherit = await envOf(c, "inherit");
    expect(inherit.GITHUB_TOKEN).toBe("secret-x");
    expect(inherit.SOME_OTHER).toBe("1");
    expect(inherit.OWN_TOKEN).toBe("theirs");
  });

  it("mcpd.defaults.envMode inherit passes the whole environment to every server; a server's own allowlist still wins", async () => {
    const { c } = await start({
      mcpd: { defaults: { envMode: "inherit" } },
      mcpServers: {
        all: fixture("all", [], { env: { OWN_TOKEN: "mine" } }),
        strict: fixture("strict", [], { envMode: "allowlist" }),
      },
    });
    const all = await envOf(c, "all");
    expect(all.GITHUB_TOKEN).toBe("secret-x");
    expect(all.SOME_OTHER).toBe("1");
    expect(all.OWN_TOKEN).toBe("mine");
    const strict = await envOf(c, "strict");
    expect(strict.GITHUB_TOKEN).toBeUndefined();
    expect(strict.HTTPS_PROXY).toBe(DAEMON_ENV.HTTPS_PROXY);
  });
});
