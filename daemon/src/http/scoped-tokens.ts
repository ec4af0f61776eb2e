import { randomBytes, timingSafeEqual } from "node:crypto";
import { McpdError, WireCode, isObject, type HttpTokenScope, type Logger } from "@mcpd/protocol";
import { isoTime } from "../infra/iso-time.js";
import { readPrivateFile, writePrivateFile } from "../infra/private-file.js";
import { tokenDigest } from "./http-guard.js";

/** A scoped token as the daemon keeps it: its SHA-256, never the token. */
export interface ScopedToken {
  readonly id: string;
  readonly scope: HttpTokenScope;
  readonly createdAt: string;
  /** SHA-256 of the token (see tokenDigest). */
  readonly digest: Buffer;
}

/** The file's form: `{ version: 1, tokens: [{ id, scope: { kind, name }, createdAt, sha256 }] }`. */
const FILE_VERSION = 1;
/** Far more than the bound's worth of entries (about 200 bytes each): a larger file is not one mcpd wrote. */
const MAX_FILE_BYTES = 1024 * 1024;
const ID_PATTERN = /^[0-9a-f]{12}$/;
const SHA256_PATTERN = /^[0-9a-f]{64}$/;
/** Longest profile or server name kept (names in a config are far shorter). */
const MAX_NAME_CHARS = 200;

/** The stored entry `raw`, checked; undefined when it is not what mcpd writes. */
function parseEntry(raw: unknown): ScopedToken | undefined {
  if (!isObject(raw) || !isObject(raw.scope)) return undefined;
  const { id, createdAt, sha256 } = raw;
  const { kind, name } = raw.scope;
  if (typeof id !== "string" || !ID_PATTERN.test(id)) return undefined;
  if (kind !== "profile" && kind !== "server") return undefined;
  if (typeof name !== "string" || name === "" || name.length > MAX_NAME_CHARS) return undefined;
  if (typeof createdAt !== "string" || typeof sha256 !== "string" || !SHA256_PATTERN.test(sha256)) return undefined;
  return { id, scope: { kind, name }, createdAt, digest: Buffer.from(sha256, "hex") };
}

/**
 * The HTTP front end's scoped tokens: each opens one profile's or one server's endpoints (see
 * token-scope.ts). Kept as SHA-256 digests with their id, scope and time of issue in a 0600 file of the
 * state directory (`http-tokens.json`), written whole on every change, so they survive restarts; a token
 * is shown once, when issued. At most `max` exist at once.
 */
export class ScopedTokenStore {
  private tokens: ScopedToken[];

  /**
   * Loads the tokens kept in `file`. A file that is not a private regular file of ours, or not what mcpd
   * writes, is logged and ignored: no scoped token opens anything until one is issued (which replaces it).
   * @param max how many may exist at once (RUNTIME_DEFAULTS.httpMaxScopedTokens)
   */
  constructor(
    private readonly file: string,
    readonly max: number,
    private readonly log: Logger,
  ) {
    this.tokens = this.load();
  }

  /** Every scoped token, oldest first. */
  list(): readonly ScopedToken[] {
    return this.tokens;
  }

  /**
   * Issues a token for `scope`: 32 random bytes, base64url, as the main token.
   * @throws McpdError MCPD_HTTP_TOKEN_LIMIT (-32602) when `max` exist; the file's write error, and then
   *   nothing was issued
   */
  issue(scope: HttpTokenScope): { token: string; entry: ScopedToken } {
    if (this.tokens.length >= this.max) {
      throw new McpdError(
        "MCPD_HTTP_TOKEN_LIMIT",
        `Too many scoped HTTP tokens: at most ${this.max} at once; revoke one first (mcpd http tokens, then mcpd http tokens revoke ID)`,
        { wireCode: WireCode.InvalidParams, data: { max: this.max } },
      );
    }
    let id: string;
    do id = randomBytes(6).toString("hex");
    while (this.tokens.some((t) => t.id === id));
    const token = randomBytes(32).toString("base64url");
    const entry: ScopedToken = { id, scope: { ...scope }, createdAt: isoTime(Date.now()), digest: tokenDigest(token) };
    this.save([...this.tokens, entry]);
    this.tokens = [...this.tokens, entry];
    return { token, entry };
  }

  /**
   * Revokes the token `id`: it matches nothing from this moment on, even when the file cannot be written
   * (then `saveError` says why, and the token would open again after a restart).
   * @throws McpdError MCPD_UNKNOWN_HTTP_TOKEN (-32602) naming the ids there are
   */
  revoke(id: string): { entry: ScopedToken; saveError?: Error } {
    const entry = this.tokens.find((t) => t.id === id);
    if (!entry) {
      const ids = this.tokens.map((t) => t.id);
      throw new McpdError(
        "MCPD_UNKNOWN_HTTP_TOKEN",
        `Unknown HTTP token id ${JSON.stringify(id.slice(0, 100))}; ids: ${ids.length > 0 ? ids.join(", ") : "(none)"} (mcpd http tokens lists them)`,
        { wireCode: WireCode.InvalidParams },
      );
    }
    this.tokens = this.tokens.filter((t) => t !== entry);
    try {
      this.save(this.tokens);
    } catch (err) {
      return { entry, saveError: err as Error };
    }
    return { entry };
  }

  /**
   * The token whose digest `presented` is (a bearerDigest), or undefined. Every entry is compared, in
   * constant time, whichever matches: how long this takes says nothing about which token was near.
   */
  match(presented: Buffer | undefined): ScopedToken | undefined {
    if (presented === undefined || presented.length !== 32) return undefined;
    let found: ScopedToken | undefined;
    for (const t of this.tokens) if (timingSafeEqual(presented, t.digest) && found === undefined) found = t;
    return found;
  }

  private save(tokens: readonly ScopedToken[]): void {
    const doc = {
      version: FILE_VERSION,
      tokens: tokens.map((t) => ({ id: t.id, scope: t.scope, createdAt: t.createdAt, sha256: t.digest.toString("hex") })),
    };
    // writePrivateFile writes a new file and renames it into place: a reader never sees half a file.
    writePrivateFile(this.file, `${JSON.stringify(doc, null, 2)}\n`);
  }

  private load(): ScopedToken[] {
    const read = readPrivateFile(this.file, { maxBytes: MAX_FILE_BYTES });
    if (read.kind !== "file" || (read.mode & 0o077) !== 0) {
      if (read.kind !== "missing")
        this.log.warn(
          { file: this.file, why: read.kind === "unusable" ? read.reason : `mode ${read.mode.toString(8)}` },
          "ignoring the scoped HTTP tokens file: not a private regular file of this user (mode 0600), or too large; no scoped token opens anything",
        );
      return [];
    }
    const text = read.text;
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      doc = undefined;
    }
    if (!isObject(doc) || doc.version !== FILE_VERSION || !Array.isArray(doc.tokens)) {
      this.log.warn({ file: this.file }, "ignoring the scoped HTTP tokens file: not what mcpd writes; no scoped token opens anything");
      return [];
    }
    const out: ScopedToken[] = [];
    for (const raw of doc.tokens) {
      const entry = parseEntry(raw);
      if (entry && !out.some((t) => t.id === entry.id)) out.push(entry);
    }
    if (out.length < doc.tokens.length)
      this.log.warn({ file: this.file, skipped: doc.tokens.length - out.length }, "skipped malformed scoped HTTP tokens");
    if (out.length > this.max) {
      this.log.warn({ file: this.file, kept: this.max, found: out.length }, "more scoped HTTP tokens than allowed; keeping the oldest");
      out.length = this.max;
    }
    return out;
  }
}
