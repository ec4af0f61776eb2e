import { describe, expect, it } from "vitest";
import { ENV_ALLOWLIST, buildChildEnv, isAllowlisted } from "../../src/stdio/env.js";

const base = {
  PATH: "/bin",
  HOME: "/home/u",
  LC_ALL: "C.UTF-8",
  HTTPS_PROXY: "http://proxy:3128",
  no_proxy: "localhost",
  NODE_EXTRA_CA_CERTS: "/ca.pem",
  AWS_SECRET_ACCESS_KEY: "s3cr3t",
  npm_config__authToken: "npm-token",
  EMPTY: undefined,
};

describe("buildChildEnv", () => {
  it("inherit: the whole base plus extra, extra winning", () => {
    expect(buildChildEnv("inherit", { PATH: "/opt/bin", X: "1" }, base)).toEqual({
      PATH: "/opt/bin",
      HOME: "/home/u",
      LC_ALL: "C.UTF-8",
      HTTPS_PROXY: "http://proxy:3128",
      no_proxy: "localhost",
      NODE_EXTRA_CA_CERTS: "/ca.pem",
      AWS_SECRET_ACCESS_KEY: "s3cr3t",
      npm_config__authToken: "npm-token",
      X: "1",
    });
  });

  it("allowlist: only the allowlisted and LC_* variables, plus extra", () => {
    const env = {
      PATH: "/bin",
      HOME: "/home/u",
      LC_ALL: "C.UTF-8",
      HTTPS_PROXY: "http://proxy:3128",
      no_proxy: "localhost",
      NODE_EXTRA_CA_CERTS: "/ca.pem",
    };
    expect(buildChildEnv("allowlist", { TOKEN: "given" }, base)).toEqual({ ...env, TOKEN: "given" });
    // The MCP SDK's default list, then locale, temp, proxy and CA-bundle variables.
    expect(ENV_ALLOWLIST).toEqual(expect.arrayContaining(["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"]));
    for (const name of [
      "LANG",
      "TZ",
      "TMPDIR",
      "TEMP",
      "HTTP_PROXY",
      "https_proxy",
      "NO_PROXY",
      "SSL_CERT_FILE",
      "REQUESTS_CA_BUNDLE",
      "LC_MESSAGES",
    ]) {
      expect(isAllowlisted(name), name).toBe(true);
    }
    for (const name of ["GITHUB_TOKEN", "NODE_OPTIONS", "npm_config_registry", "MCPD_HOME", "path"])
      expect(isAllowlisted(name), name).toBe(false);
  });

  it("is allowlist mode by default", () => {
    expect(buildChildEnv(undefined, undefined, base)).toEqual(buildChildEnv("allowlist", undefined, base));
    expect(buildChildEnv(undefined, undefined, base).AWS_SECRET_ACCESS_KEY).toBeUndefined();
  });

  it("allowlist: skips values that are exported shell functions, as the SDK does; extra is never filtered", () => {
    const env = buildChildEnv("allowlist", { SHELL: "() { given; }" }, { PATH: "/bin", TERM: "() { :; }; touch /tmp/x" });
    expect(env).toEqual({ PATH: "/bin", SHELL: "() { given; }" });
  });

  it("never mutates its inputs", () => {
    const input = { ...base };
    buildChildEnv("allowlist", { A: "1" }, input);
    expect(input).toEqual(base);
  });
});
