import { RUNTIME_DEFAULTS } from "../defaults.js";

/**
 * The reason a `ready` server's state gives: why its session (re)started, plus which lists of that
 * session keep changing (list_changed after every re-read), so a server that never settles says so.
 */
export class ReadyReason {
  /** Lists of the current session that keep changing. */
  private readonly unsettled = new Set<string>();
  private started = "";

  /** A new session begins: none of its lists keeps changing yet. */
  newSession(): void {
    this.unsettled.clear();
  }

  /** The session is ready, started for `reason`. Returns the whole reason. */
  ready(reason: string): string {
    this.started = reason;
    return this.text();
  }

  /** A list of the session keeps changing (`unsettled` true) or no longer does. Returns the whole reason now. */
  list(kind: string, unsettled: boolean): string {
    if (unsettled) this.unsettled.add(kind);
    else this.unsettled.delete(kind);
    return this.text();
  }

  /** The `ready` reason, plus which lists keep changing. */
  text(): string {
    if (this.unsettled.size === 0) return this.started;
    const kinds = [...this.unsettled].sort();
    const lists = `the ${kinds.join(", ")} list${kinds.length > 1 ? "s keep" : " keeps"} changing`;
    const every = RUNTIME_DEFAULTS.listRefreshMinIntervalMs;
    return `${this.started}; ${lists} (list_changed after every re-read): re-read at most once per ${every} ms`;
  }
}
