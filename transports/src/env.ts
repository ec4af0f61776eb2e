/**
 * The environment a stdio server's child process starts with.
 *
 * `inherit` (the default) passes the daemon's whole environment, then the server's `env` on top.
 * `allowlist` passes only the variables a well-behaved CLI needs to run, then the server's `env`:
 * - {@link ENV_ALLOWLIST}: HOME, LOGNAME, PATH, SHELL, TERM, USER (what the MCP SDKs pass by default),
 *   plus LANG, LANGUAGE, TMPDIR and TZ, because without them servers mis-decode non-ASCII text, write
 *   temp files to the wrong place or log in the wrong time zone, and none of them carries a secret;
 * - every `LC_*` locale variable, for the same reason as LANG.
 * Anything else (tokens, cloud credentials, the daemon's own settings) stays out of the child.
 */

/** Variables passed through in `allowlist` mode, besides `LC_*`. */
export const ENV_ALLOWLIST: readonly string[] = Object.freeze([
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "TERM",
  "USER",
  "LANG",
  "LANGUAGE",
  "TMPDIR",
  "TZ",
]);

const ALLOWED = new Set(ENV_ALLOWLIST);

/** How the child's environment is built; see the module comment. */
export type EnvMode = "inherit" | "allowlist";

/**
 * Builds the child's environment: the base (default `process.env`) filtered by `mode`, then `extra`
 * on top (`extra` always wins). Undefined base values are skipped. Never mutates its inputs.
 */
export function buildChildEnv(
  mode: EnvMode = "inherit",
  extra: Record<string, string> | undefined = undefined,
  base: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of Object.keys(base)) {
    const value = base[key];
    if (value === undefined) continue;
    if (mode === "allowlist" && !ALLOWED.has(key) && !key.startsWith("LC_")) continue;
    env[key] = value;
  }
  if (extra) for (const key of Object.keys(extra)) env[key] = extra[key] as string;
  return env;
}
