import type { JsonObject, Logger } from "@mcpd/protocol";
import type { MessageContext } from "@mcpd/transports";

export type ListKind = "tools" | "prompts" | "resources";

/** A server's `notifications/<kind>/list_changed`, as received: method, params, context. */
export type ListNotice = [method: string, params: JsonObject | undefined, context: MessageContext];

export interface ListRefresherOptions {
  /** Reads one list from the server and stores it; never rejects. */
  read: (kind: ListKind) => Promise<void>;
  /** Least time between the starts of two re-reads of one list, in ms. */
  minIntervalMs: number;
  logger: Logger;
  /** Relays a list_changed once the re-read that covers it is done. */
  onNotice: (notice: ListNotice) => void;
  /** list_changed asks for re-reads of `kind` back to back ({@link UNSETTLED_AFTER} in a row). */
  onUnsettled: (kind: ListKind) => void;
  /** A whole interval passed without a re-read of an unsettled `kind` being asked for. */
  onSettled: (kind: ListKind) => void;
}

/** Re-reads of one list asked for back to back (while one ran, or too soon after) before the list counts as unsettled. */
const UNSETTLED_AFTER = 3;

/** The re-reads of one list: at most one running and one queued behind it. */
interface ListRefresh {
  running: Promise<void> | undefined;
  queued: Promise<void> | undefined;
  /** The queued re-read's wait for the rate limit, and how to end that wait early (close). */
  timer: NodeJS.Timeout | undefined;
  wake: (() => void) | undefined;
  /** Ends the unsettled mark once no re-read was asked for during one interval. */
  settleTimer: NodeJS.Timeout | undefined;
  lastStartAt: number;
  lastEndAt: number;
  /** Re-reads asked for back to back; reset by a quiet interval. */
  backToBack: number;
  unsettled: boolean;
  /** The list_changed notification to relay once the next re-read (the one that covers it) is done. */
  notice: ListNotice | undefined;
}

/**
 * The re-reads of one session's tool, prompt and resource lists, coalesced and rate-limited per kind:
 * one re-read runs, at most one more is queued behind it (every list_changed that arrives meanwhile
 * joins it), and two re-reads start at least `minIntervalMs` apart. A server that sends list_changed
 * after every response (supergateway's stateless mode does) therefore costs one listing per interval,
 * never a loop. Each list_changed is relayed (`onNotice`) once the re-read that covers it is done, one
 * per re-read however many arrived.
 */
export class ListRefresher {
  private readonly opts: ListRefresherOptions;
  private readonly refreshes = new Map<ListKind, ListRefresh>();
  /** Set once the session ended: no more re-reads start. */
  private ended = false;

  constructor(options: ListRefresherOptions) {
    this.opts = options;
  }

  /** The first listing of a kind: one already running (a list_changed came first) or done counts. */
  listOnce(kind: ListKind): Promise<void> {
    const r = this.refreshOf(kind);
    if (r.running) return r.running;
    if (r.lastEndAt > 0) return Promise.resolve();
    return this.refresh(kind);
  }

  private refreshOf(kind: ListKind): ListRefresh {
    let r = this.refreshes.get(kind);
    if (r === undefined) {
      r = {
        running: undefined,
        queued: undefined,
        timer: undefined,
        wake: undefined,
        settleTimer: undefined,
        lastStartAt: 0,
        lastEndAt: 0,
        backToBack: 0,
        unsettled: false,
        notice: undefined,
      };
      this.refreshes.set(kind, r);
    }
    return r;
  }

  /**
   * Re-reads one list. Coalesced: while one re-read runs, every call shares the one queued behind it;
   * rate-limited: a re-read starts at least `minIntervalMs` after the previous one started.
   * Resolves once the re-read that covers this call is done (or the session ended). Never rejects.
   */
  refresh(kind: ListKind): Promise<void> {
    const r = this.refreshOf(kind);
    if (this.ended) return Promise.resolve();
    if (r.queued) return r.queued;
    if (!r.running && Date.now() - r.lastStartAt >= this.opts.minIntervalMs) return this.startRefresh(kind, r);
    const queued = (async () => {
      // Yield first, so `r.queued` is set below before this body can clear it.
      await undefined;
      if (r.running) await r.running;
      const delay = r.lastStartAt + this.opts.minIntervalMs - Date.now();
      if (delay > 0 && !this.ended) {
        await new Promise<void>((resolve) => {
          r.wake = resolve;
          r.timer = setTimeout(resolve, delay);
          r.timer.unref();
        });
      }
      r.timer = undefined;
      r.wake = undefined;
      r.queued = undefined;
      if (!this.ended) await this.startRefresh(kind, r);
    })();
    r.queued = queued;
    return queued;
  }

  private startRefresh(kind: ListKind, r: ListRefresh): Promise<void> {
    r.lastStartAt = Date.now();
    // This re-read covers every list_changed received so far; later ones wait for the next.
    const notice = r.notice;
    r.notice = undefined;
    const run = this.opts.read(kind).finally(() => {
      r.running = undefined;
      r.lastEndAt = Date.now();
      if (notice) this.opts.onNotice(notice);
      clearTimeout(r.settleTimer);
      r.settleTimer = undefined;
      if (r.unsettled && !r.queued && !this.ended) {
        r.settleTimer = setTimeout(() => {
          r.settleTimer = undefined;
          if (r.running || r.queued || !r.unsettled) return;
          r.unsettled = false;
          r.backToBack = 0;
          this.opts.onSettled(kind);
        }, this.opts.minIntervalMs);
        r.settleTimer.unref();
      }
    });
    r.running = run;
    return run;
  }

  /** The session ended: queued re-reads give up instead of asking a closed transport. */
  end(): void {
    this.ended = true;
    for (const r of this.refreshes.values()) {
      clearTimeout(r.timer);
      clearTimeout(r.settleTimer);
      r.settleTimer = undefined;
      r.wake?.();
    }
  }

  /**
   * A list_changed arrived: it is relayed once the re-read that covers it is done. `handshakeDone`
   * false: the capabilities are unknown yet, and the session's first listing covers it.
   */
  changed(kind: ListKind, notice: ListNotice, handshakeDone: boolean): void {
    const r = this.refreshOf(kind);
    r.notice = notice;
    if (!handshakeDone || this.ended) return;
    // Only a list_changed that queues a new re-read counts (a burst joining one queued re-read is one).
    if (!r.queued) this.countBackToBack(kind, r);
    void this.refresh(kind);
  }

  /**
   * A list_changed asked for a re-read: back to back when one is running or ended less than an interval
   * ago, else after a quiet spell. {@link UNSETTLED_AFTER} back to back mark the list unsettled.
   */
  private countBackToBack(kind: ListKind, r: ListRefresh): void {
    clearTimeout(r.settleTimer);
    r.settleTimer = undefined;
    if (!r.running && Date.now() - r.lastEndAt >= this.opts.minIntervalMs) {
      r.backToBack = 0;
      return;
    }
    if (++r.backToBack >= UNSETTLED_AFTER && !r.unsettled) {
      r.unsettled = true;
      this.opts.logger.warn(
        { kind, minIntervalMs: this.opts.minIntervalMs },
        `the server keeps sending ${kind}/list_changed: re-reading the list at most once per interval`,
      );
      this.opts.onUnsettled(kind);
    }
  }
}
