import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { createRootLogger } from "../../src/infra/logger.js";
import { isSecretName, looksGenerated, SecretScrubber, secretValues } from "../../src/secrets/index.js";

function configs(servers: Record<string, unknown>) {
  return parseConfig(JSON.stringify({ mcpServers: servers }), "/c/config.json", {}).servers;
}

const GH = "ghp_R2x9Lk4PqZ7vT1mN8sW3yB6cH0dJ5fG2aE9u";

describe("isSecretName: env keys, header and flag names that name a secret", () => {
  it.each([
    ["GITHUB_TOKEN", true],
    ["GITHUB_PERSONAL_ACCESS_TOKEN", true],
    ["ghToken", true],
    ["PGPASSWORD", true],
    ["DB_PASS", true],
    ["MYSQL_PWD", true],
    ["CLIENT_SECRET", true],
    ["OPENAI_API_KEY", true],
    ["apiKey", true],
    ["APIKEY", true],
    ["X-Api-Key", true],
    ["Authorization", true],
    ["Proxy-Authorization", true],
    ["Cookie", true],
    ["SESSION", true],
    ["SSH_PRIVATE_KEY", true],
    ["GOOGLE_APPLICATION_CREDENTIALS", true],
    ["AWS_SECRET_ACCESS_KEY", true],
    ["GITHUB_PAT", true],
    ["NODE_ENV", false],
    ["SERVER_NAME", false],
    ["HOME", false],
    ["USER", false],
    ["PATH", false],
    ["LOG_LEVEL", false],
    ["MAX_TOKENS", false],
    ["TOKENIZER", false],
    ["MONKEY", false],
    ["AUTHOR", false],
    ["AUTH_MODE", false],
    ["TOKEN_URL", false],
    ["KEY_FILE", false],
    ["API_BASE_URL", false],
    ["Accept", false],
    ["User-Agent", false],
    ["X-Tenant", false],
  ])("%s -> %s", (name, expected) => {
    expect(isSecretName(name)).toBe(expected);
  });
});

describe("looksGenerated: values shaped like generated credentials", () => {
  it.each([
    [GH, true],
    ["github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", true],
    ["sk-proj-4fQ9xZ2LmN7pR3tV8wY1", true],
    ["xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", true],
    ["AKIAIOSFODNN7EXAMPLE", true],
    ["glpat-xY3zA8bC1dE6fG9hJ2kL", true],
    ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", true],
    ["9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", true],
    ["123e4567-e89b-12d3-a456-426614174000", true],
    ["Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==", true],
    ["q8Xf3LmZ9wR2tK7vB4nY", true],
    ["production", false],
    ["warehouse", false],
    ["development", false],
    ["/home/alice/projects/data", false],
    ["/usr/local/bin:/usr/bin:/bin", false],
    ["alice.smith", false],
    ["alice@example.com", false],
    ["en_US.UTF-8", false],
    ["1.2.3-beta.4+build.5", false],
    ["warehouse-inventory-service-v2", false],
    ["node_modules_v18_2024", false],
    ["https://api.example.com/mcp", false],
    ["MyCompanyProduction2024", false],
    ["short1A", false],
    ["--api-key=echoargsecret-9x7k2", false],
    ["key=Zm9vYmFyYmF6cXV4MTIzNDU2", false],
  ])("%s -> %s", (value, expected) => {
    expect(looksGenerated(value)).toBe(expected);
  });
});

describe("secretValues: the rule", () => {
  it("takes secret-named env values, generated-looking values and URL credentials; never the server's name, plain words or paths", () => {
    const [c] = configs({
      warehouse: {
        command: "node",
        args: ["server.js", "--name", "warehouse", "--api-key=argsecret-1234", "--region", "eu-west-1", "sk-live-Zr8Qp2Wx7Lm4Nv9Tb3"],
        env: {
          SERVER_NAME: "warehouse",
          NODE_ENV: "production",
          HOME_DIR: "/home/alice",
          USER_NAME: "alice.smith",
          GITHUB_TOKEN: GH,
          DB_PASSWORD: "hunter22",
          DATABASE_URL: "postgres://dbuser:dbpass-9876@db.example.com/app?sslmode=require",
          SESSION_ID: "Qm7vX2pL9sK4tR8wZ3nB",
          AUTH_MODE: "oauth-device",
          SERVICE_TOKEN: "warehouse",
        },
      },
    });
    const values = secretValues(c!);
    for (const v of [GH, "hunter22", "dbpass-9876", "dbuser", "Qm7vX2pL9sK4tR8wZ3nB", "argsecret-1234", "sk-live-Zr8Qp2Wx7Lm4Nv9Tb3"])
      expect(values).toContain(v);
    for (const v of ["warehouse", "production", "/home/alice", "alice.smith", "oauth-device", "eu-west-1", "server.js", "node"])
      expect(values).not.toContain(v);
  });

  it("takes secret-named and generated header values, the credential after an auth scheme, URL credentials; not plain headers", () => {
    const [c] = configs({
      remote: {
        type: "http",
        url: "https://u:urlpass-4321@mcp.example.com/mcp?token=querytoken-77&region=europe",
        headers: {
          Authorization: "Bearer abc.def-ghi",
          "X-Api-Key": "plainwordkey",
          "X-Tenant": "acme-production",
          Accept: "application/json",
          "X-Trace": "T9kLm2Qx7Vb4Np8Rz3Ws",
        },
      },
    });
    const values = secretValues(c!);
    for (const v of ["Bearer abc.def-ghi", "abc.def-ghi", "plainwordkey", "urlpass-4321", "querytoken-77", "T9kLm2Qx7Vb4Np8Rz3Ws"])
      expect(values).toContain(v);
    for (const v of ["acme-production", "application/json", "europe"]) expect(values).not.toContain(v);
  });
});

describe("SecretScrubber (regression: every env value of 6+ characters was masked, the server's own name too)", () => {
  it("masks the token; leaves the server's name, production, paths and user names", () => {
    const cs = configs({
      warehouse: {
        command: "node",
        args: ["server.js"],
        env: { SERVER_NAME: "warehouse", NODE_ENV: "production", WORKDIR: "/home/alice/data", OWNER: "alice.smith", GITHUB_TOKEN: GH },
      },
      // Another server's secret that contains this server's name still does not mask the name alone.
      other: { command: "node", env: { API_TOKEN: "warehouse-x9Tq2Lm8Zp4R" } },
    });
    const s = new SecretScrubber(() => cs);
    expect(s.scrub(`Unknown tool "warehouse__echo"`)).toBe(`Unknown tool "warehouse__echo"`);
    expect(s.scrub(`env production in /home/alice/data for alice.smith`)).toBe(`env production in /home/alice/data for alice.smith`);
    expect(s.scrub(`auth with ${GH} failed`)).toBe("auth with *** failed");
    expect(s.scrub(`key=${encodeURIComponent(GH)}`)).toBe("key=***");
    expect(s.scrub("token warehouse-x9Tq2Lm8Zp4R for warehouse")).toBe("token *** for warehouse");
    expect(s.scrubValue({ reason: `Unknown tool "warehouse__echo"`, token: GH })).toEqual({
      reason: `Unknown tool "warehouse__echo"`,
      token: "***",
    });
  });

  it("never masks any server's name, even one that equals a secret value elsewhere", () => {
    const cs = configs({ "deploy-bot": { command: "node" }, x: { command: "node", env: { GITHUB_TOKEN: "deploy-bot" } } });
    expect(new SecretScrubber(() => cs).scrub("deploy-bot__run")).toBe("deploy-bot__run");
  });
});

describe("SecretScrubber.scrubValue: one function value -> value, handed on alone", () => {
  it("scrubs a string as text and any other JSON value as a copy, detached from its scrubber; the root logger runs every line through it", () => {
    const cs = configs({ gh: { command: "node", env: { GITHUB_TOKEN: GH } } });
    const { scrubValue } = new SecretScrubber(() => cs);
    expect(scrubValue(`token "${GH}"`)).toBe('token "***"');
    expect(scrubValue({ list: [GH, "kept"], n: 1 })).toEqual({ list: ["***", "kept"], n: 1 });
    const clean = { a: "nothing secret" };
    expect(scrubValue(clean)).toBe(clean);
    expect(scrubValue(undefined)).toBeUndefined();

    const lines: string[] = [];
    const root = createRootLogger("info", { write: (line: string) => lines.push(line) }, 1);
    root.setScrubber(scrubValue);
    root.log.warn({ stderr: `bad credentials ${GH}` }, `server said ${JSON.stringify(GH)}`);
    // Regression: a secret in a field nobody expected, nested deep in an array, is masked too.
    root.log.child({ server: "gh" }).info({ reply: { content: [{ text: `echo ${GH}` }] } }, "nested");
    expect(lines.join("")).not.toContain(GH);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ stderr: "bad credentials ***", msg: 'server said "***"' });
    expect(JSON.parse(lines[1] as string)).toMatchObject({ server: "gh", reply: { content: [{ text: "echo ***" }] } });
  });
});

describe("regression: a URL password with a stray % in one server's env", () => {
  // `%zz` is not a percent-escape: decoding it threw, and the config was already marked seen, so none
  // of that server's secrets (its other env values, its arguments) were ever scrubbed.
  const cs = configs({
    lk: {
      command: "node",
      args: ["leak.mjs", "--password", "argPassword99"],
      env: { MY_TOKEN: "abcdefSECRETvalue", DB_URL: "postgres://dbuser:pw%zzSecret@localhost/db" },
    },
  });

  it("regression: secretValues keeps the password as written (and decoded where it decodes) instead of throwing", () => {
    const values = secretValues(cs[0]!);
    expect(values).toContain("pw%zzSecret");
    expect(values).toContain("abcdefSECRETvalue");
    expect(values).toContain("argPassword99");
    const ok = secretValues(configs({ d: { command: "node", env: { DB_URL: "postgres://u:p%40ssword1@h/db" } } })[0]!);
    expect(ok).toEqual(expect.arrayContaining(["p%40ssword1", "p@ssword1"]));
  });

  it("regression: the scrubber masks every secret of that server, the first time and after", () => {
    const s = new SecretScrubber(() => cs);
    const line = "ARGS --password argPassword99 ENV MY_TOKEN=abcdefSECRETvalue DB_URL=postgres://dbuser:pw%zzSecret@localhost/db";
    for (let i = 0; i < 2; i++) {
      let out = "";
      expect(() => {
        out = s.scrub(line);
      }).not.toThrow();
      for (const secret of ["argPassword99", "abcdefSECRETvalue", "pw%zzSecret"]) expect(out).not.toContain(secret);
    }
  });
});
