import path from "node:path";
import { readPrivateKey, type OAuthSettings } from "@mcpd/transports";
import { describeValue, isPlainObject, type ConfigIssues } from "./config-issues.js";
import { readWithSchema } from "./read-with-schema.js";
import { AuthObjectSchema } from "./server-entry-schema.js";

/**
 * The `auth` object of an HTTP server entry: the OAuth client settings (see {@link OAuthSettings}), and
 * `privateKeyFile`, a file holding the PEM key (read when the server starts). docs/configuration.md
 * describes each key.
 */
export interface AuthConfig extends OAuthSettings {
  /** An absolute path (`~` and relative paths resolved when the config is read). */
  privateKeyFile?: string;
}

/** What reading `auth` needs: where to report, and how to resolve a key file's path. */
export interface AuthConfigContext {
  issues: ConfigIssues;
  where: string;
  homedir: string;
  baseDir: string;
}

/**
 * Validates a server's `auth`: `false` (no OAuth even when the server asks), `true` or an object its
 * schema ({@link AuthObjectSchema}) checks key by key, then what the schema cannot: which keys go
 * together, whether `privateKey` holds a usable key. Problems go to `ctx.issues` (a secret's value is
 * never quoted); returns undefined when absent, null when invalid.
 */
export function readAuthConfig(value: unknown, ctx: AuthConfigContext): AuthConfig | false | undefined | null {
  if (value === undefined) return undefined;
  if (value === false) return false;
  if (value === true) return {};
  const { issues } = ctx;
  if (!isPlainObject(value)) {
    issues.error(ctx.where, `"auth" must be an object (OAuth settings), true or false, got ${describeValue(value)}`);
    return null;
  }
  const where = `${ctx.where}: "auth"`;
  const errorsBefore = issues.errors.length;
  const out: AuthConfig = readWithSchema(AuthObjectSchema, value, { issues, where, prefix: "" }) ?? {};
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
