import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { RUNTIME_DEFAULTS } from "../../defaults.js";

/** A dashboard session: what its cookie opens, and the CSRF token its actions must carry. */
export interface DashboardSession {
  csrf: string;
  expiresAt: number;
}

const digest = (secret: string): string => createHash("sha256").update(secret).digest("base64url");
const secret = (): string => randomBytes(32).toString("base64url");

/** Adds `key` to `map`, dropping the oldest entries past `max` (a Map iterates in insertion order). */
function bounded<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.set(key, value);
  for (const k of map.keys()) {
    if (map.size <= max) break;
    map.delete(k);
  }
}

/**
 * The dashboard's own kind of access, apart from the front end's bearer tokens: one-time login links
 * (`mcpd dashboard`; single use, valid {@link RUNTIME_DEFAULTS.dashboardLoginTtlMs}) that exchange
 * themselves for a session cookie, and each session's CSRF token. Only SHA-256 digests of the link
 * tickets and cookies are kept, in memory: a daemon restart logs every dashboard out.
 */
export class DashboardAccess {
  private readonly tickets = new Map<string, number>();
  private readonly sessions = new Map<string, DashboardSession>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A new login ticket and when it stops working (epoch ms). */
  issueTicket(): { ticket: string; expiresAt: number } {
    const ticket = secret();
    const expiresAt = this.now() + RUNTIME_DEFAULTS.dashboardLoginTtlMs;
    bounded(this.tickets, digest(ticket), expiresAt, RUNTIME_DEFAULTS.dashboardMaxLogins);
    return { ticket, expiresAt };
  }

  /**
   * Uses up `ticket`: a new session's cookie value, or undefined for a ticket used already, expired or
   * never issued (each of which is refused alike).
   */
  redeem(ticket: string): string | undefined {
    const key = digest(ticket);
    const expiresAt = this.tickets.get(key);
    this.tickets.delete(key);
    if (expiresAt === undefined || expiresAt < this.now()) return undefined;
    const cookie = secret();
    const session = { csrf: secret(), expiresAt: this.now() + RUNTIME_DEFAULTS.dashboardSessionTtlMs };
    bounded(this.sessions, digest(cookie), session, RUNTIME_DEFAULTS.dashboardMaxLogins);
    return cookie;
  }

  /** The session a cookie value opens; undefined when none (or expired). */
  session(cookie: string | undefined): DashboardSession | undefined {
    if (cookie === undefined) return undefined;
    const key = digest(cookie);
    const s = this.sessions.get(key);
    if (s === undefined) return undefined;
    if (s.expiresAt < this.now()) {
      this.sessions.delete(key);
      return undefined;
    }
    return s;
  }

  /** Whether `session` still opens the dashboard: not expired, nor let go for newer logins. */
  live(session: DashboardSession): boolean {
    if (session.expiresAt < this.now()) return false;
    for (const s of this.sessions.values()) if (s === session) return true;
    return false;
  }

  /** Whether `presented` is the session's CSRF token (compared in constant time). */
  static csrfMatches(session: DashboardSession, presented: string | undefined): boolean {
    if (presented === undefined) return false;
    const a = Buffer.from(digest(presented));
    const b = Buffer.from(digest(session.csrf));
    return a.length === b.length && timingSafeEqual(a, b);
  }
}

/** The value of cookie `name` in a `Cookie` header; undefined when not there. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
