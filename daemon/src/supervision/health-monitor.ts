import type { Logger } from "@mcpd/protocol";
import type { UpstreamClient } from "./upstream-client.js";
import type { ServerStats } from "./server-stats.js";

/** Missed pings in a row before a restart, unless {@link HealthMonitorOptions.maxMissedPings} says otherwise. */
const MAX_MISSED_PINGS = 3;

export interface HealthMonitorOptions {
  /** The server's request counters: `inFlight` and `lastUsedAt` say whether it is idle, `lastAnsweredAt` when it last answered. */
  stats: ServerStats;
  logger: Logger;
  /** Missed pings in a row before `onUnhealthy`. Default 3. */
  maxMissedPings?: number | undefined;
  /** The session armed as `gen` while it is the current one and ready; undefined otherwise (the check waits). */
  session: (gen: number) => UpstreamClient | undefined;
  /** Whether `gen` is still the current session (a late ping failure of an older one is ignored). */
  isCurrent: (gen: number) => boolean;
  /** The server had no request in flight for `idleMs`: stop it. */
  onIdle: (idleMs: number) => void;
  /** `missed` health pings in a row failed: restart the session. */
  onUnhealthy: (missed: number) => void;
}

/**
 * The timer of one server's ready session: stops the server once idle (no request in flight and none
 * for `idleTimeout`), and pings a session that has answered nothing (no call, no ping) for a ping interval,
 * idle or not: a hung server whose calls keep timing out is pinged as an idle one is, while one that
 * answers its calls is left alone. {@link HealthMonitorOptions.maxMissedPings} failed pings in a row end it.
 * One timer per session, ticking at the ping interval or a quarter of the idle timeout (at least 50 ms),
 * whichever is shorter; none when both are 0.
 */
export class HealthMonitor {
  private readonly opts: HealthMonitorOptions;
  private timer: NodeJS.Timeout | undefined;
  private missedPings = 0;

  constructor(options: HealthMonitorOptions) {
    this.opts = options;
  }

  /** Starts checking session `gen` (replacing the previous timer): pings every `everyMs`, idle stop after `idleMs`; 0 disables each. */
  arm(gen: number, everyMs: number, idleMs: number): void {
    this.stop();
    this.missedPings = 0;
    const stats = this.opts.stats;
    const tick = Math.min(everyMs > 0 ? everyMs : Infinity, idleMs > 0 ? Math.max(50, Math.floor(idleMs / 4)) : Infinity);
    if (!Number.isFinite(tick)) return;
    let lastPing = Date.now();
    // When the session last showed it is alive: armed (it just became ready), or a ping it answered.
    let heard = lastPing;
    this.timer = setInterval(() => {
      const client = this.opts.session(gen);
      if (!client) return;
      const now = Date.now();
      if (idleMs > 0 && stats.inFlight === 0 && now - stats.lastUsedAt >= idleMs) {
        this.opts.onIdle(idleMs);
        return;
      }
      if (everyMs > 0 && now - lastPing >= everyMs && now - Math.max(heard, stats.lastAnsweredAt) >= everyMs) {
        lastPing = now;
        client.ping({ timeout: Math.min(everyMs, 10_000) }).then(
          () => {
            this.missedPings = 0;
            heard = Math.max(heard, now);
          },
          (err: Error) => {
            if (!this.opts.isCurrent(gen)) return;
            this.missedPings++;
            this.opts.logger.warn({ missed: this.missedPings, err: err.message }, "health ping failed");
            if (this.missedPings >= (this.opts.maxMissedPings ?? MAX_MISSED_PINGS)) this.opts.onUnhealthy(this.missedPings);
          },
        );
      }
    }, tick);
    this.timer.unref();
  }

  /** Stops the checks (the session ended or is being replaced). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
