import type { ResolvedServerConfig } from "../config/config-schema.js";
import { secretValues } from "./config-secrets.js";
import { REDACTED } from "./redacted.js";

/**
 * Secret values shorter than this many characters are not scrubbed: replacing every "1" or "true" in
 * the logs would destroy them, and values that short are not credentials anyway.
 */
export const MIN_SCRUBBED_SECRET_CHARS = 6;

/** Secrets that are in no config (OAuth tokens and client secrets: the AuthStore), re-read when `version` changes. */
export interface SecretSource {
  readonly version: number;
  secrets(): string[];
}

/**
 * Replaces the secret values of every configured server ({@link secretValues}: by name, shape and URL
 * credentials, never a server's name) with `***` in text the daemon emits about its servers: log lines,
 * and the errors, states and stderr lines it reports to clients. Config redaction
 * masks the config itself; this catches the secrets a server echoes back (a usage error naming its
 * `--api-key=...`, an HTTP library quoting its URL) on their way out. Each value is matched as written,
 * URL-encoded and JSON-escaped. Not applied to results relayed to clients: those are the server's data.
 */
export class SecretScrubber {
  private seen = new Set<ResolvedServerConfig>();
  private readonly values = new Set<string>();
  /** Every server name seen: never masked, nor any part of one. */
  private readonly names = new Set<string>();
  private needles: string[] = [];
  /** The secrets {@link extra} gave at its last version (replaced whole when its version changes). */
  private extraValues = new Set<string>();
  private extraVersion = -1;

  /**
   * @param source the configs whose secrets to scrub; asked again on every use. Secrets of configs that
   * are gone (a server removed or changed by reload) stay scrubbed: its last lines may still come.
   * @param extra secrets that are not in any config (OAuth tokens and client secrets), read again
   * whenever its `version` changes.
   * The daemon builds one (`daemon.ts`), installs it in the root logger and hands it to the router.
   */
  constructor(
    private readonly source: () => Iterable<ResolvedServerConfig>,
    private readonly extra?: SecretSource,
  ) {}

  private refresh(): void {
    let changed = false;
    if (this.extra && this.extra.version !== this.extraVersion) {
      this.extraVersion = this.extra.version;
      this.extraValues = new Set(
        this.extra
          .secrets()
          .filter((v) => v.length >= MIN_SCRUBBED_SECRET_CHARS)
          .flatMap((v) => [v, encodeURIComponent(v), JSON.stringify(v).slice(1, -1)]),
      );
      changed = true;
    }
    for (const c of this.source()) {
      if (this.seen.has(c)) continue;
      // Collected before the config is marked seen: should collecting ever throw, the next use tries again
      // instead of leaving every secret of this server unscrubbed for good.
      const secrets = secretValues(c);
      if (!this.names.has(c.name)) {
        this.names.add(c.name);
        changed = true;
      }
      for (const v of secrets) {
        if (v.length < MIN_SCRUBBED_SECRET_CHARS) continue;
        for (const form of [v, encodeURIComponent(v), JSON.stringify(v).slice(1, -1)]) {
          if (!this.values.has(form)) {
            this.values.add(form);
            changed = true;
          }
        }
      }
      this.seen.add(c);
    }
    if (!changed) return;
    // A value that is (part of) a server's name is not masked: `Unknown tool "***__echo"` helps no one,
    // and a name is in the config file, the socket's answers and every log line anyway.
    const names = [...this.names];
    // Longest first, so a secret that contains another is replaced whole.
    this.needles = [...new Set([...this.values, ...this.extraValues])]
      .filter((v) => !names.some((n) => n.includes(v)))
      .sort((a, b) => b.length - a.length);
  }

  /** `text` with every known secret value replaced by `***`. */
  scrub(text: string): string {
    this.refresh();
    let out = text;
    for (const n of this.needles) if (out.includes(n)) out = out.split(n).join(REDACTED);
    return out;
  }

  /**
   * `value` with every known secret value replaced by `***`: a string as text ({@link scrub}), any other
   * JSON value as a copy with every string scrubbed (the value itself when it holds no secret);
   * `undefined` when it cannot be scrubbed (no JSON form): better lost than leaked. One function value ->
   * value, bound to this scrubber so it can be handed on alone: the root logger runs every finished line
   * through it (a logger that hands it records instead, as pino's `formatters.log` would, works the same).
   */
  readonly scrubValue = <T>(value: T): T | undefined => {
    if (typeof value === "string") return this.scrub(value) as T;
    this.refresh();
    if (this.needles.length === 0 || value === undefined) return value;
    try {
      const json = JSON.stringify(value);
      const scrubbed = this.scrub(json);
      return scrubbed === json ? value : (JSON.parse(scrubbed) as T);
    } catch {
      return undefined;
    }
  };
}
