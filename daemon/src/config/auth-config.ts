import path from "node:path";
import { JWT_ALGORITHMS, readPrivateKey, type OAuthSettings } from "@mcpd/transports";
import { describeValue, isPlainObject, type ConfigIssues } from "./config-issues.js";
import { hintFor } from "./did-you-mean.js";

/**
 * The `auth` object of an HTTP server entry: the OAuth client settings (see {@link OAuthSettings}), and
 * `privateKeyFile`, a file holding the PEM key (read when the server starts). docs/configuration.md
 * describes each key.
 */
export interface AuthConfig extends OAuthSettings {
  /** An absolute path (`~` and relative paths resolved when the config is read). */
  privateKeyFile?: string;
}

/** The keys of an `auth` object. */
export const AUTH_KEYS = [
  "grant",
  "clientId",
  "clientSecret",
  "privateKey",
  "privateKeyFile",
  "signingAlgorithm",
  "scopes",
  "clientMetadataUrl",
  "clientName",
  "redirectPort",
] as const;

/** What reading `auth` needs: where to report, and how to resolve a key file's path. */
export interface AuthConfigContext {
  issues: ConfigIssues;
  where: string;
  homedir: string;
  baseDir: string;
}

const STRING_KEYS = [
  "clientId",
  "clientSecret",
  "privateKey",
  "privateKeyFile",
  "signingAlgorithm",
  "clientMetadataUrl",
  "clientName",
] as const;

/**
 * Validates a server's `auth`: `false` (no OAuth even when the server asks), `true` or an object of
 * {@link AUTH_KEYS}. Problems go to `ctx.issues` (a secret's value is never quoted); returns undefined
 * when absent, null when invalid.
 */
export function readAuthConfig(value: unknown, ctx: AuthConfigContext): AuthConfig | false | undefined | null {
  if (value === undefined) return undefined;
  if (value === false) return false;
  if (value === true) return {};
  const { issues } = ctx;
  const where = `${ctx.where}: "auth"`;
  if (!isPlainObject(value)) {
    issues.error(ctx.where, `"auth" must be an object (OAuth settings), true or false, got ${describeValue(value)}`);
    return null;
  }
  const errorsBefore = issues.errors.length;
  const out: AuthConfig = {};
  for (const key of Object.keys(value)) {
    if (!(AUTH_KEYS as readonly string[]).includes(key)) issues.warn(where, `unknown key "${key}" ignored${hintFor(key, AUTH_KEYS)}`);
  }
  for (const key of STRING_KEYS) {
    const v = value[key];
    if (v === undefined) continue;
    if (typeof v !== "string" || v.trim() === "") {
      // Never echo what may be a secret.
      issues.error(
        where,
        `"${key}" must be a non-empty string, got ${typeof v === "string" ? "an empty one" : `a ${v === null ? "null" : typeof v}`}`,
      );
      continue;
    }
    out[key] = v;
  }
  if (value.grant !== undefined) {
    if (value.grant === "authorization_code" || value.grant === "client_credentials") out.grant = value.grant;
    else issues.error(where, `"grant" must be "authorization_code" or "client_credentials", got ${describeValue(value.grant)}`);
  }
  if (value.scopes !== undefined) {
    const scopes = typeof value.scopes === "string" ? value.scopes.split(/\s+/).filter((s) => s !== "") : value.scopes;
    if (Array.isArray(scopes) && scopes.every((s) => typeof s === "string" && s !== "" && !/\s/.test(s))) out.scopes = [...new Set(scopes)];
    else
      issues.error(where, `"scopes" must be an array of scope names (or one space-separated string), got ${describeValue(value.scopes)}`);
  }
  if (value.redirectPort !== undefined) {
    const p = value.redirectPort;
    if (typeof p === "number" && Number.isInteger(p) && p >= 1 && p <= 65535) out.redirectPort = p;
    else issues.error(where, `"redirectPort" must be a port number (1 to 65535), got ${describeValue(p)}`);
  }
  if (out.signingAlgorithm !== undefined && !JWT_ALGORITHMS.includes(out.signingAlgorithm)) {
    issues.error(where, `"signingAlgorithm" must be one of ${JWT_ALGORITHMS.join(", ")}, got ${describeValue(out.signingAlgorithm)}`);
  }
  if (out.clientMetadataUrl !== undefined && !isHttpsWithPath(out.clientMetadataUrl)) {
    issues.error(
      where,
      `"clientMetadataUrl" must be an https URL with a path (a Client ID Metadata Document), got ${describeValue(out.clientMetadataUrl)}`,
    );
  }
  if (out.privateKey !== undefined && out.privateKeyFile !== undefined) {
    issues.error(where, `has both "privateKey" and "privateKeyFile"; keep one`);
  }
  if (out.privateKey !== undefined) {
    try {
      readPrivateKey(out.privateKey);
    } catch (err) {
      issues.error(where, (err as Error).message.replace(/^auth: /, ""));
    }
  }
  if (out.privateKeyFile !== undefined) {
    const f = out.privateKeyFile;
    out.privateKeyFile = f === "~" || f.startsWith("~/") ? path.join(ctx.homedir, f.slice(1)) : path.resolve(ctx.baseDir, f);
  }
  if (
    out.grant === "client_credentials" &&
    (out.clientId === undefined || (out.clientSecret === undefined && out.privateKey === undefined && out.privateKeyFile === undefined))
  ) {
    issues.error(where, `"grant": "client_credentials" needs "clientId" and one of "clientSecret", "privateKey", "privateKeyFile"`);
  }
  if ((out.clientSecret !== undefined || out.privateKey !== undefined || out.privateKeyFile !== undefined) && out.clientId === undefined) {
    issues.error(where, `a client secret or key needs the "clientId" it belongs to`);
  }
  return issues.errors.length > errorsBefore ? null : out;
}

function isHttpsWithPath(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === "https:" && u.pathname.length > 1;
  } catch {
    return false;
  }
}
