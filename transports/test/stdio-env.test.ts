import { describe, expect, it } from "vitest";
import { ENV_ALLOWLIST, buildChildEnv } from "../src/env.js";

const base = { PATH: "/bin", HOME: "/home/u", LC_ALL: "C.UTF-8", AWS_SECRET_ACCESS_KEY: "s3cr3t", EMPTY: undefined };

describe("buildChildEnv", () => {
  it("inherit: the whole base plus extra, extra winning", () => {
    expect(buildChildEnv("inherit", { PATH: "/opt/bin", X: "1" }, base)).toEqual({
      PATH: "/opt/bin",
      HOME: "/home/u",
      LC_ALL: "C.UTF-8",
      AWS_SECRET_ACCESS_KEY: "s3cr3t",
      X: "1",
    });
  });

  it("allowlist: only the allowlisted and LC_* variables, plus extra", () => {
    expect(buildChildEnv("allowlist", { TOKEN: "given" }, base)).toEqual({ PATH: "/bin", HOME: "/home/u", LC_ALL: "C.UTF-8", TOKEN: "given" });
    expect(ENV_ALLOWLIST).toEqual(expect.arrayContaining(["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"]));
  });

  it("never mutates its inputs", () => {
    const input = { ...base };
    buildChildEnv("allowlist", { A: "1" }, input);
    expect(input).toEqual(base);
  });
});
