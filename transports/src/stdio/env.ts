/**
 * The environment a stdio server's child process starts with.
 *
 * `allowlist` (the default) passes only what a well-behaved CLI needs to run, then the server's `env`:
 * the variables in {@link ENV_ALLOWLIST} and every `LC_*` locale variable. Anything else (other servers'
 * tokens, cloud credentials, the daemon's own `MCPD_*` settings) stays out of the child, as with the
 * official MCP SDKs, which pass only HOME, LOGNAME, PATH, SHELL, TERM and USER by default. Values that
 * start with `()` (exported shell functions) are skipped, as the SDK does.
 * `inherit` passes the daemon's whole environment, then the server's `env` on top.
 */

/**
 * Variables passed through in `allowlist` mode, besides every `LC_*` variable. Each group is there
 * because servers break without it, and none of them is meant to carry a server's credential:
 * - the MCP SDK's own default list (POSIX): HOME, LOGNAME, PATH, SHELL, TERM, USER;
 * - locale and time zone: LANG, LANGUAGE, TZ (plus `LC_*`): without them non-ASCII text is mis-decoded;
 * - temp dir: TMPDIR, TMP, TEMP: temp files go where the user's system puts them;
 * - XDG base directories: where config, caches and runtime sockets live (npx and uvx keep their caches
 *   under HOME or XDG_CACHE_HOME, so HOME, PATH and these are all they need to run);
 * - proxy settings, both spellings: behind a proxy, a server that fetches anything fails without them.
 *   A proxy URL may hold the proxy's own credentials; every networked server needs the same proxy;
 * - CA bundles (Node, OpenSSL, Python requests, curl, and Node's switch to the system store): behind
 *   a TLS-inspecting proxy or with a private CA, HTTPS fails without them.
 * Not passed: package-registry settings (`npm_config_*`, `NPM_CONFIG_*`, `UV_*`, `PIP_*`), which can
 * hold registry tokens or index URLs with credentials; `NODE_OPTIONS`, which would load code into every
 * Node server. A server that needs one lists it in its `env` (`"NAME": "${NAME}"`).
 */
export const ENV_ALLOWLIST = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "TERM",
  "USER",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TMPDIR",
  "TMP",
  "TEMP",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "XDG_CACHE_HOME",
  "XDG_STATE_HOME",
  "XDG_RUNTIME_DIR",
  "XDG_CONFIG_DIRS",
  "XDG_DATA_DIRS",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "all_proxy",
  "NODE_EXTRA_CA_CERTS",
  "NODE_USE_SYSTEM_CA",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
] as const;

/** Prefixes of variables passed through in `allowlist` mode (the locale categories). */
export const ENV_ALLOWLIST_PREFIXES = ["LC_"] as const;

const ALLOWED: ReadonlySet<string> = new Set(ENV_ALLOWLIST);

/** How the child's environment is built; see the module comment. */
export type EnvMode = "inherit" | "allowlist";

/** Whether `allowlist` mode passes the variable `name` (when its value is not a shell function). */
export function isAllowlisted(name: string): boolean {
  return ALLOWED.has(name) || ENV_ALLOWLIST_PREFIXES.some((p) => name.startsWith(p));
}

/**
 * Builds the child's environment: the base (default `process.env`) filtered by `mode` (default
 * `allowlist`), then `extra` on top (`extra` always wins, and is never filtered). Undefined base values
 * are skipped. Never mutates its inputs.
 */
export function buildChildEnv(
  mode: EnvMode = "allowlist",
  extra: Record<string, string> | undefined = undefined,
  base: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of Object.keys(base)) {
    const value = base[key];
    if (value === undefined) continue;
    // An exported shell function (`() { ...; }`) is code for the child's shell, not a setting.
    if (mode === "allowlist" && (!isAllowlisted(key) || value.startsWith("()"))) continue;
    env[key] = value;
  }
  if (extra) for (const key of Object.keys(extra)) env[key] = extra[key] as string;
  return env;
}
