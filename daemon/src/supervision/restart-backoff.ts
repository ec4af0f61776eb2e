import type { RestartPolicy } from "../config/config-schema.js";

/** A restart granted by {@link RestartBackoff.next}: its number within the window, and its delay in ms. */
export interface RestartSlot {
  attempt: number;
  delayMs: number;
}

/**
 * One server's restart record under its {@link RestartPolicy}: a crash-loop breaker (at most
 * `maxRestarts` restarts within any `windowMs`) and exponential backoff (`initialDelayMs`, doubled for
 * each restart already in the window, at most `maxDelayMs`, +-20% jitter).
 */
export class RestartBackoff {
  /** When each restart still in the window was granted (Date.now()), oldest first. */
  private times: number[] = [];

  /** Grants and records a restart at `now`, or returns undefined when the window already holds `maxRestarts`. */
  next(policy: RestartPolicy, now = Date.now()): RestartSlot | undefined {
    this.times = this.times.filter((t) => now - t < policy.windowMs);
    if (this.times.length >= policy.maxRestarts) return undefined;
    this.times.push(now);
    const attempt = this.times.length;
    const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
    // Jitter (+-20%) keeps servers that died together from restarting in lockstep.
    return { attempt, delayMs: Math.round(base * (0.8 + Math.random() * 0.4)) };
  }

  /** Forgets the restarts so far: a manual restart or an enable gets a fresh start. */
  reset(): void {
    this.times = [];
  }
}
