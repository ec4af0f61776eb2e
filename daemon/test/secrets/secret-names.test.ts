/**
 * The one secret-name rule, and every place that asks it: a name (env key, header, flag, `NAME=` argument,
 * URL query parameter, log field) is a secret's name by this table, whichever of them it appears in.
 * `strong`: its value is a secret whatever it is; `weak`: only a value that is not a plain word (shown
 * masked all the same); `none`: not a secret's name.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { createRootLogger } from "../../src/infra/logger.js";
import { isSecretName, redactArgs, redactUrl, secretNameStrength, secretValues } from "../../src/secrets/index.js";

type Strength = "strong" | "weak" | "none";

const RULE: readonly (readonly [string, Strength])[] = [
  // Whole words of the name, split at `_`, `-`, `.` and camelCase.
  ["token", "strong"],
  ["GITHUB_TOKEN", "strong"],
  ["access_token", "strong"],
  ["ghToken", "strong"],
  ["password", "strong"],
  ["pass", "strong"],
  ["DB_PASS", "strong"],
  ["MYSQL_PWD", "strong"],
  ["passphrase", "strong"],
  ["secret", "strong"],
  ["client_secret", "strong"],
  ["api_key", "strong"],
  ["apiKey", "strong"],
  ["X-Api-Key", "strong"],
  ["key", "strong"],
  ["Authorization", "strong"],
  ["authorization", "strong"],
  ["Proxy-Authorization", "strong"],
  ["Cookie", "strong"],
  ["credentials", "strong"],
  ["creds", "strong"],
  ["bearer", "strong"],
  ["jwt", "strong"],
  ["signature", "strong"],
  ["GITHUB_PAT", "strong"],
  // A secret word run together with others at the end of one word.
  ["PGPASSWORD", "strong"],
  ["GHTOKEN", "strong"],
  ["MYAPIKEY", "strong"],
  // Secret words only for values that are not plain words.
  ["auth", "weak"],
  ["SESSION", "weak"],
  ["sig", "weak"],
  ["private", "weak"],
  // The last word says the value is about the secret, not the secret.
  ["AUTH_MODE", "none"],
  ["TOKEN_URL", "none"],
  ["KEY_FILE", "none"],
  ["tokenFile", "none"],
  ["SESSION_TIMEOUT", "none"],
  ["CLIENT_ID", "none"],
  ["sessionId", "none"],
  // Not a whole word of the name.
  ["MAX_TOKENS", "none"],
  ["TOKENIZER", "none"],
  ["AUTHOR", "none"],
  ["author", "none"],
  ["oauth", "none"],
  ["signal", "none"],
  ["design", "none"],
  ["MONKEY", "none"],
  // Plain names.
  ["region", "none"],
  ["page", "none"],
  ["port", "none"],
  ["NODE_ENV", "none"],
  ["User-Agent", "none"],
  ["env", "none"],
  ["headers", "none"],
];

/** A value that is not a plain word, not a path, and does not look generated: only a name makes it a secret. */
const VALUE = "Zq-value-1";
/** A plain word: a secret under a strong name only. */
const WORD = "plainvalue";

const shownMasked = (s: Strength): boolean => s !== "none";

describe("the secret-name rule", () => {
  it.each(RULE)("%s is %s", (name, strength) => {
    expect(secretNameStrength(name) ?? "none").toBe(strength);
    expect(isSecretName(name)).toBe(strength !== "none");
  });
});

describe("every redaction asks the one rule (regression: three rules disagreed on flags, query parameters and log fields)", () => {
  it.each(RULE)("URL query parameter %s (%s)", (name, strength) => {
    const shown = redactUrl(`https://h/mcp?${name}=${VALUE}&page=2`);
    expect(shown).toBe(shownMasked(strength) ? `https://h/mcp?${name}=***&page=2` : `https://h/mcp?${name}=${VALUE}&page=2`);
  });

  it.each(RULE)("flag --%s (%s)", (name, strength) => {
    const masked = shownMasked(strength);
    expect(redactArgs([`--${name}=${VALUE}`])).toEqual([masked ? `--${name}=***` : `--${name}=${VALUE}`]);
    expect(redactArgs([`--${name}`, VALUE, "next"])).toEqual([`--${name}`, masked ? "***" : VALUE, "next"]);
  });

  it.each(RULE.filter(([name]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)))("argument %s=... (%s)", (name, strength) => {
    expect(redactArgs([`${name}=${VALUE}`])).toEqual([shownMasked(strength) ? `${name}=***` : `${name}=${VALUE}`]);
  });

  it.each(RULE)("env key and header %s (%s): the values the scrubber learns", (name, strength) => {
    const [stdio, http] = parseConfig(
      JSON.stringify({
        mcpServers: {
          a: { command: "node", env: { [name]: VALUE } },
          b: { type: "http", url: "https://h/mcp", headers: { [name]: WORD } },
        },
      }),
      "/c/config.json",
      {},
    ).servers;
    expect(secretValues(stdio!).includes(VALUE)).toBe(strength !== "none");
    expect(secretValues(http!).includes(WORD)).toBe(strength === "strong");
  });

  it.each(RULE)("log field %s (%s): masked whole under a strong name, top level and one object down", (name, strength) => {
    const chunks: string[] = [];
    createRootLogger("info", { write: (c: string) => chunks.push(c) }, 1).log.info({ [name]: VALUE, inner: { [name]: VALUE } }, "m");
    const line = JSON.parse(chunks[0] as string) as Record<string, unknown>;
    const masked = strength === "strong" || name === "env" || name === "headers";
    expect(line[name]).toBe(masked ? "***" : VALUE);
    expect((line.inner as Record<string, unknown>)[name]).toBe(masked ? "***" : VALUE);
  });
});
