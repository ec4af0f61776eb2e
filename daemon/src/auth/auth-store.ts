import { rmSync } from "node:fs";
import path from "node:path";
import { silentLogger, type Logger } from "@mcpd/protocol";
import type { ClientRegistration, OAuthTokens } from "@mcpd/transports";
import { readPrivateFile, writePrivateFile } from "../infra/private-file.js";
import { preparePrivateDir } from "../infra/state-dir.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";

/** The two files of one server: its tokens and its client registrations. */
type Kind = "tokens" | "client";

/** A server's tokens, by authorization server and resource (`<issuer> <resource>`), and which are in use. */
interface TokensDoc {
  version: 2;
  current?: string;
  tokens: Record<string, OAuthTokens>;
}

/** A server's client registrations, one per authorization server (by issuer). */
interface ClientsDoc {
  version: 2;
  clients: Record<string, ClientRegistration>;
}

type Doc = TokensDoc | ClientsDoc;

/** The key of tokens: the authorization server that issued them and the resource they are for. */
export function tokensKey(tokens: OAuthTokens): string {
  return `${tokens.issuer ?? new URL(tokens.tokenEndpoint).origin} ${tokens.resource}`;
}

/**
 * The OAuth tokens and client registrations of every server, two files each in `<stateDir>/auth/`:
 * `<server>.tokens.json` (tokens keyed by issuer and resource, and the key in use) and
 * `<server>.client.json` (registrations keyed by issuer: a server that moves to another authorization
 * server registers there anew, and keeps the old one's). The directory is 0700 and checked like the state
 * directory, the files 0600, each written as a new file renamed into place ({@link writePrivateFile}, so a
 * crash leaves the old or the new file, never half of one), never through a symbolic link; read without
 * blocking, and only when a regular file of the user's own. Read once, then served from memory.
 *
 * The layout before (one object per file: the tokens, the registration) is migrated the first time a
 * file is read: keyed by the issuer and resource it names, written back, so nobody logs in again after
 * an upgrade. Secret values (tokens, client secrets) are offered to the secret scrubber ({@link secrets}),
 * and so are those of the last ones replaced, since a late log line may still quote them.
 */
export class AuthStore {
  private readonly cache = new Map<string, Doc | null>();
  /** Secrets of replaced or forgotten tokens, newest last, bounded. */
  private retired: string[] = [];
  private versionValue = 0;
  private prepared = false;

  constructor(
    readonly dir: string,
    private readonly log: Logger = silentLogger,
  ) {}

  /** The tokens the server uses now. */
  tokens(server: string): OAuthTokens | undefined {
    const doc = this.read(server, "tokens") as TokensDoc | null;
    return doc?.current === undefined ? undefined : doc.tokens[doc.current];
  }

  /** Stores tokens under their issuer and resource and uses them; `undefined` forgets the ones in use. */
  saveTokens(server: string, tokens: OAuthTokens | undefined): void {
    const doc: TokensDoc = structuredClone((this.read(server, "tokens") as TokensDoc | null) ?? { version: 2, tokens: {} });
    if (tokens) {
      doc.current = tokensKey(tokens);
      doc.tokens[doc.current] = tokens;
    } else if (doc.current !== undefined) {
      delete doc.tokens[doc.current];
      delete doc.current;
    }
    this.write(server, "tokens", Object.keys(doc.tokens).length > 0 ? doc : undefined);
  }

  /** The server's registration with the authorization server `issuer`. */
  registration(server: string, issuer: string): ClientRegistration | undefined {
    return (this.read(server, "client") as ClientsDoc | null)?.clients[issuer];
  }

  /** Stores the registration with `issuer`; `undefined` forgets it (the server no longer knows the client). */
  saveRegistration(server: string, issuer: string, registration: ClientRegistration | undefined): void {
    const doc: ClientsDoc = structuredClone((this.read(server, "client") as ClientsDoc | null) ?? { version: 2, clients: {} });
    if (registration) doc.clients[issuer] = registration;
    else delete doc.clients[issuer];
    this.write(server, "client", Object.keys(doc.clients).length > 0 ? doc : undefined);
  }

  /** Forgets a server's tokens and registrations (`mcpd auth --logout`). True when there was something to forget. */
  forget(server: string): boolean {
    const had = this.read(server, "tokens") !== null || this.read(server, "client") !== null;
    this.write(server, "tokens", undefined);
    this.write(server, "client", undefined);
    return had;
  }

  /** Bumped whenever a secret value appears or goes: the scrubber re-reads {@link secrets} then. */
  get version(): number {
    return this.versionValue;
  }

  /** Every secret value known: stored tokens and client secrets, and those of recently replaced ones. */
  secrets(): string[] {
    const out = [...this.retired];
    for (const doc of this.cache.values()) if (doc) out.push(...secretsOf(doc));
    return out;
  }

  /** The path of one of a server's files. */
  file(server: string, kind: Kind): string {
    return path.join(this.dir, `${server}.${kind}.json`);
  }

  private read(server: string, kind: Kind): Doc | null {
    const key = `${kind}\0${server}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    let doc: Doc | null = null;
    const file = this.file(server, kind);
    try {
      this.prepare();
      // A file someone widened is made private again before anything is read from it.
      const read = readPrivateFile(file, { maxBytes: RUNTIME_DEFAULTS.stateFileMaxBytes, tighten: true });
      if (read.kind === "unusable") this.log.warn({ server, file }, `ignoring the ${kind} file: ${read.reason}`);
      if (read.kind === "file") doc = this.parse(server, kind, JSON.parse(read.text));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // The message of a JSON error may quote the file's content: only its class is logged.
      this.log.warn({ server, file, err: code ?? (err as Error).name }, `cannot read the ${kind} file; ignoring it`);
    }
    this.cache.set(key, doc);
    if (doc) this.versionValue++;
    return doc;
  }

  /** A file's content as this layout; the layout before is migrated (and written back). */
  private parse(server: string, kind: Kind, value: unknown): Doc | null {
    const file = this.file(server, kind);
    if (isDoc(value, kind)) return value;
    if (kind === "tokens" && validTokens(value)) {
      const doc: TokensDoc = { version: 2, current: tokensKey(value), tokens: { [tokensKey(value)]: value } };
      writePrivateFile(file, `${JSON.stringify(doc, null, 2)}\n`);
      this.log.info({ server, file }, "tokens migrated to the layout keyed by issuer and resource");
      return doc;
    }
    if (kind === "client" && validRegistration(value)) {
      const doc: ClientsDoc = { version: 2, clients: { [value.issuer]: value } };
      writePrivateFile(file, `${JSON.stringify(doc, null, 2)}\n`);
      this.log.info({ server, file }, "client registration migrated to the layout keyed by issuer");
      return doc;
    }
    this.log.warn({ server, file }, `ignoring ${kind} file that is not what mcpd writes`);
    return null;
  }

  private write(server: string, kind: Kind, doc: Doc | undefined): void {
    const previous = this.read(server, kind);
    if (previous) this.retire(secretsOf(previous));
    this.cache.set(`${kind}\0${server}`, doc ?? null);
    this.versionValue++;
    const file = this.file(server, kind);
    this.prepare();
    if (doc === undefined) rmSync(file, { force: true });
    else writePrivateFile(file, `${JSON.stringify(doc, null, 2)}\n`);
  }

  private retire(values: string[]): void {
    this.retired.push(...values);
    const max = RUNTIME_DEFAULTS.retiredSecretsKept;
    if (this.retired.length > max) this.retired = this.retired.slice(-max);
  }

  private prepare(): void {
    if (this.prepared) return;
    const note = preparePrivateDir(this.dir, "OAuth token directory");
    if (note) this.log.warn({ dir: this.dir }, note);
    this.prepared = true;
  }
}

function secretsOf(doc: Doc): string[] {
  if ("tokens" in doc)
    return Object.values(doc.tokens).flatMap((t) => (t.refreshToken === undefined ? [t.accessToken] : [t.accessToken, t.refreshToken]));
  return Object.values(doc.clients).flatMap((c) => (c.clientSecret === undefined ? [] : [c.clientSecret]));
}

function isDoc(value: unknown, kind: Kind): value is Doc {
  if (typeof value !== "object" || value === null || (value as { version?: unknown }).version !== 2) return false;
  const map = (value as Record<string, unknown>)[kind === "tokens" ? "tokens" : "clients"];
  if (typeof map !== "object" || map === null) return false;
  return Object.values(map).every(kind === "tokens" ? validTokens : validRegistration);
}

function validTokens(value: unknown): value is OAuthTokens {
  const v = value as Record<string, unknown> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.accessToken === "string" &&
    typeof v.tokenEndpoint === "string" &&
    typeof v.resource === "string" &&
    typeof v.obtainedAt === "number" &&
    Array.isArray(v.scopes) &&
    (v.grant === "authorization_code" || v.grant === "client_credentials")
  );
}

function validRegistration(value: unknown): value is ClientRegistration {
  const v = value as Record<string, unknown> | null;
  return (
    typeof v === "object" && v !== null && typeof v.clientId === "string" && typeof v.issuer === "string" && Array.isArray(v.redirectUris)
  );
}
