import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** What a sealed `requestState` says: the waiting server request it refers to, whom it was issued to, until when. */
export interface StateClaims {
  /** The held request's reference. */
  readonly ref: string;
  /** The connection (or HTTP token) it was issued to. */
  readonly bind: string;
  /** Expiry, in ms since the epoch. */
  readonly exp: number;
  /** The method of the request it was issued for (its retry must be the same request). */
  readonly method: string;
  /** What that request named (a tool's or prompt's name, a resource's URI), as the client named it; absent: nothing. */
  readonly target?: string;
}

/** Marks mcpd's own states: any other `requestState` is a server's, passed through untouched. */
const PREFIX = "mcpd.rs1.";

/** Why a state of mcpd's was refused. */
export type StateRefusal = "tampered" | "foreign" | "expired";

/**
 * The `requestState` mcpd issues to a 2026-era client for a 2025-era server's mid-call request: the claims,
 * base64url JSON, then an HMAC-SHA256 of them under a key drawn at random for this daemon (a state from an
 * earlier daemon, or one altered by a byte, fails the check). Bound to the connection it was issued to and
 * expiring, as the 2026 specification asks of state that drives a server's logic.
 */
export class StateSealer {
  private readonly key = randomBytes(32);

  /** Whether `state` claims to be one of mcpd's. */
  static isOurs(state: unknown): state is string {
    return typeof state === "string" && state.startsWith(PREFIX);
  }

  seal(claims: StateClaims): string {
    const body = Buffer.from(JSON.stringify(claims)).toString("base64url");
    return `${PREFIX}${body}.${this.mac(body)}`;
  }

  /** The claims of a state mcpd issued to `bind` that has not expired, or why it is refused. */
  open(state: string, bind: string, now = Date.now()): StateClaims | StateRefusal {
    const rest = state.slice(PREFIX.length);
    const dot = rest.lastIndexOf(".");
    if (dot < 0) return "tampered";
    const body = rest.slice(0, dot);
    // The text, not its decoding: base64url's last character has bits no decoder reads.
    const given = Buffer.from(rest.slice(dot + 1));
    const want = Buffer.from(this.mac(body));
    if (given.length !== want.length || !timingSafeEqual(given, want)) return "tampered";
    let claims: StateClaims;
    try {
      claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as StateClaims;
    } catch {
      return "tampered";
    }
    if (claims.bind !== bind) return "foreign";
    if (!(claims.exp > now)) return "expired";
    return claims;
  }

  private mac(body: string): string {
    return createHmac("sha256", this.key).update(PREFIX).update(body).digest("base64url");
  }
}
