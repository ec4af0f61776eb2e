import { rmSync } from "node:fs";
import path from "node:path";
import { silentLogger, type Logger } from "@mcpd/protocol";
import type { ClientRegistration, OAuthTokens } from "@mcpd/transports";
import { readPrivateFile, writePrivateFile } from "../infra/private-file.js";
import { preparePrivateDir } from "../infra/state-dir.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";

/** The two files of one server: its tokens and its client registration. */
type Kind = "tokens" | "client";

/**
 * The OAuth tokens and client registrations of every server, one file each in `<stateDir>/auth/`
 * (`<server>.tokens.json`, `<server>.client.json`): the directory 0700 and checked like the state
 * directory, the files 0600, each written as a new file renamed into place ({@link writePrivateFile}),
 * never through a symbolic link; read without blocking, and only when a regular file of the user's own
 * (a FIFO, a link or another user's file is ignored with a warning, and replaced by the next write).
 * Read once, then served from memory. Their secret values (access and refresh tokens,
 * client secrets) are offered to the secret scrubber ({@link secrets}), and so are those of the last
 * tokens replaced, since a late log line may still quote them.
 */
export class AuthStore {
  private readonly cache = new Map<string, OAuthTokens | ClientRegistration | null>();
  /** Secrets of replaced or forgotten tokens, newest last, bounded. */
  private retired: string[] = [];
  private versionValue = 0;
  private prepared = false;

  constructor(
    readonly dir: string,
    private readonly log: Logger = silentLogger,
  ) {}

  tokens(server: string): OAuthTokens | undefined {
    return (this.read(server, "tokens") as OAuthTokens | null) ?? undefined;
  }

  saveTokens(server: string, tokens: OAuthTokens | undefined): void {
    this.write(server, "tokens", tokens);
  }

  registration(server: string): ClientRegistration | undefined {
    return (this.read(server, "client") as ClientRegistration | null) ?? undefined;
  }

  saveRegistration(server: string, registration: ClientRegistration | undefined): void {
    this.write(server, "client", registration);
  }

  /** Forgets a server's tokens and registration (`mcpd auth --logout`). True when there was something to forget. */
  forget(server: string): boolean {
    const had = this.tokens(server) !== undefined || this.registration(server) !== undefined;
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
    for (const value of this.cache.values()) if (value) out.push(...secretsOf(value));
    return out;
  }

  /** The path of one of a server's files. */
  file(server: string, kind: Kind): string {
    return path.join(this.dir, `${server}.${kind}.json`);
  }

  private key(server: string, kind: Kind): string {
    return `${kind}\0${server}`;
  }

  private read(server: string, kind: Kind): OAuthTokens | ClientRegistration | null {
    const key = this.key(server, kind);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    let value: OAuthTokens | ClientRegistration | null = null;
    const file = this.file(server, kind);
    try {
      this.prepare();
      // A file someone widened is made private again before anything is read from it.
      const read = readPrivateFile(file, { maxBytes: RUNTIME_DEFAULTS.stateFileMaxBytes, tighten: true });
      if (read.kind === "unusable") this.log.warn({ server, file }, `ignoring the ${kind} file: ${read.reason}`);
      if (read.kind === "file") {
        const parsed: unknown = JSON.parse(read.text);
        value = valid(parsed, kind) ? parsed : null;
        if (!value) this.log.warn({ server, file }, `ignoring ${kind} file that is not what mcpd writes`);
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // The message of a JSON error may quote the file's content: only its class is logged.
      this.log.warn({ server, file, err: code ?? (err as Error).name }, `cannot read the ${kind} file; ignoring it`);
    }
    this.cache.set(key, value);
    if (value) this.versionValue++;
    return value;
  }

  private write(server: string, kind: Kind, value: OAuthTokens | ClientRegistration | undefined): void {
    const key = this.key(server, kind);
    const previous = this.read(server, kind);
    if (previous) this.retire(secretsOf(previous));
    this.cache.set(key, value ?? null);
    this.versionValue++;
    const file = this.file(server, kind);
    this.prepare();
    if (value === undefined) {
      rmSync(file, { force: true });
      return;
    }
    writePrivateFile(file, `${JSON.stringify(value, null, 2)}\n`);
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

function secretsOf(value: OAuthTokens | ClientRegistration): string[] {
  if ("accessToken" in value) return value.refreshToken === undefined ? [value.accessToken] : [value.accessToken, value.refreshToken];
  return value.clientSecret === undefined ? [] : [value.clientSecret];
}

function valid(value: unknown, kind: Kind): value is OAuthTokens | ClientRegistration {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  if (kind === "tokens") {
    return (
      typeof v.accessToken === "string" &&
      typeof v.tokenEndpoint === "string" &&
      typeof v.resource === "string" &&
      typeof v.obtainedAt === "number" &&
      Array.isArray(v.scopes) &&
      (v.grant === "authorization_code" || v.grant === "client_credentials")
    );
  }
  return typeof v.clientId === "string" && typeof v.issuer === "string" && Array.isArray(v.redirectUris);
}
