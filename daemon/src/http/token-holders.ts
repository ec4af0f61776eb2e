import type { ServerResponse } from "node:http";
import { onGone } from "./http-respond.js";
import type { Session } from "../router/session.js";
import type { HttpSessions } from "./http-sessions.js";

/**
 * What each scoped token holds open on the HTTP front end: the responses of its requests still being
 * answered (POST streams, GET streams, legacy SSE streams) and the sessions it opened (both transports).
 * Revoking a token ends all of them at once ({@link cut}): a session opened with it gets nothing more,
 * and its client's next request, carrying the revoked token, gets 401. Bounded by what it tracks: open
 * responses (the connection cap) and live sessions (`maxSessions`; ended ones are dropped as new ones come).
 */
export class TokenHolders {
  private readonly responses = new Map<string, Set<ServerResponse>>();
  private readonly opened = new Map<string, Set<string>>();

  constructor(private readonly sessions: HttpSessions) {}

  /** Keeps `res`, a response to a request made with token `id`, until its client can no longer get it. */
  track(id: string, res: ServerResponse): void {
    let set = this.responses.get(id);
    if (!set) this.responses.set(id, (set = new Set()));
    const held = set;
    held.add(res);
    onGone(res, () => {
      held.delete(res);
      if (held.size === 0 && this.responses.get(id) === held) this.responses.delete(id);
    });
  }

  /**
   * The sessions as a request made with token `id` is given them: the same object in every respect, but
   * every session it opens (either transport) is first given to `confine` and remembered as that token's,
   * and a session id is found only among the token's own sessions. (The handlers open sessions after reading the body, so the token cannot
   * be passed any other way without them knowing of tokens.)
   */
  sessionsFor(id: string, confine: (session: Session) => void): HttpSessions {
    const target = this.sessions;
    const remember = (sessionId: string): void => {
      let set = this.opened.get(id);
      if (!set) this.opened.set(id, (set = new Set()));
      for (const old of set) if (!target.streamable(old) && !target.legacy(old)) set.delete(old);
      set.add(sessionId);
    };
    // A session id is looked up among this token's own: one another token (or the main one) opened is not found.
    const own = (sessionId: string): boolean => this.opened.get(id)?.has(sessionId) === true;
    const streamable: HttpSessions["streamable"] = (sessionId) => (own(sessionId) ? target.streamable(sessionId) : undefined);
    const legacy: HttpSessions["legacy"] = (sessionId) => (own(sessionId) ? target.legacy(sessionId) : undefined);
    const openStreamable: HttpSessions["openStreamable"] = (path, view) => {
      const opened = target.openStreamable(path, view);
      if ("status" in opened) return opened;
      confine(opened.session);
      remember(opened.id);
      return opened;
    };
    const openLegacy: HttpSessions["openLegacy"] = (res, view) => {
      const opened = target.openLegacy(res, view);
      if ("status" in opened) return opened;
      confine(opened.session);
      remember(opened.id);
      return opened;
    };
    const openModern: HttpSessions["openModern"] = (outbound, view) => {
      const opened = target.openModern(outbound, view, `token:${id}`);
      if (!("status" in opened)) confine(opened);
      return opened;
    };
    return new Proxy(target, {
      get(t, prop) {
        if (prop === "openStreamable") return openStreamable;
        if (prop === "openLegacy") return openLegacy;
        if (prop === "openModern") return openModern;
        if (prop === "streamable") return streamable;
        if (prop === "legacy") return legacy;
        const value: unknown = Reflect.get(t, prop, t);
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(t) : value;
      },
    });
  }

  /**
   * Ends what token `id` holds: the sessions it opened (their streams close, their requests still
   * running are cancelled upstream), then its responses still open (a legacy session ends with its
   * stream). @returns how many sessions and responses were ended.
   */
  cut(id: string): number {
    let n = 0;
    for (const sessionId of this.opened.get(id) ?? []) {
      const s = this.sessions.streamable(sessionId);
      if (!s) continue;
      this.sessions.end(s, "its HTTP token was revoked");
      n++;
    }
    this.opened.delete(id);
    for (const res of [...(this.responses.get(id) ?? [])]) {
      if (res.destroyed || res.writableEnded) continue;
      res.destroy();
      n++;
    }
    this.responses.delete(id);
    return n;
  }
}
