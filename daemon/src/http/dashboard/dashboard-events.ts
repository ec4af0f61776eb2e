import type { ServerResponse } from "node:http";
import type { JsonObject, Logger } from "@mcpd/protocol";
import { RUNTIME_DEFAULTS } from "../../defaults.js";
import type { LiveFigures } from "../../metrics/metrics-snapshot.js";
import type { ManagerListener } from "../../supervision/manager.js";
import { onGone } from "../http-respond.js";

/** What the live stream reads: the daemon's status and log through the dashboard's control connection. */
export interface EventSource {
  /** `mcpd/status` as the `mcpd` command gets it. */
  status(): Promise<JsonObject>;
  /** The daemon's last log lines (`mcpd/logs`). */
  logs(): Promise<string[]>;
  /** Watches every server's events (the manager's `watch`); returns the function that stops. */
  watch(listener: ManagerListener): () => void;
  /** Every server's call, error and latency-bucket counters as they stand. */
  figures(): LiveFigures;
}

/**
 * The dashboard's one server-sent event stream (`/dashboard/events`), shared by every open page: a
 * `status` event (the `mcpd status` report) and a `figures` event (the counters the charts are drawn from)
 * pushed at once on each server's state change and on a low-rate tick, and a `log` event when the daemon's
 * log has new lines. While no page watches, it watches nothing and ticks not: no work for the dashboard on
 * the relay path or anywhere else. The relay path only bumps counters; the page turns them into rates and
 * percentiles.
 */
export class DashboardEvents {
  /** The open streams, each with whether its login session still opens the dashboard. */
  private readonly pages = new Map<ServerResponse, () => boolean>();
  private unwatch: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pushing = false;
  private again = false;
  private lastLog = "";

  constructor(
    private readonly source: EventSource,
    private readonly log: Logger,
  ) {}

  /**
   * Opens the stream on `res` and sends the state as it is now. `live`: whether the login session it was
   * opened with still opens the dashboard; once not (expired, or let go for newer logins), the stream ends.
   */
  open(res: ServerResponse, live: () => boolean): void {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", "x-accel-buffering": "no" });
    res.write(`retry: ${RUNTIME_DEFAULTS.httpSseRetryMs}\n\n`);
    this.pages.set(res, live);
    onGone(res, () => this.leave(res));
    if (this.pages.size === 1) this.start();
    this.lastLog = "";
    this.push();
  }

  /** Ends every stream (shutdown). */
  close(): void {
    for (const res of [...this.pages.keys()]) res.end();
    this.stop();
    this.pages.clear();
  }

  private start(): void {
    const push = (): void => this.push();
    this.unwatch = this.source.watch({ state: push, added: push, removed: push });
    this.timer = setInterval(push, RUNTIME_DEFAULTS.dashboardTickMs);
    this.timer.unref();
  }

  private stop(): void {
    this.unwatch?.();
    this.unwatch = undefined;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private leave(res: ServerResponse): void {
    if (this.pages.delete(res) && this.pages.size === 0) this.stop();
  }

  /** Sends the state now; pushes asked for while one is under way are folded into one more after it. */
  private push(): void {
    if (this.pushing) {
      this.again = true;
      return;
    }
    this.pushing = true;
    void this.send()
      .catch((err: Error) => this.log.warn({ err: err.message }, "dashboard: could not read the state"))
      .finally(() => {
        this.pushing = false;
        if (this.again && this.pages.size > 0) {
          this.again = false;
          this.push();
        }
      });
  }

  private async send(): Promise<void> {
    if (this.pages.size === 0) return;
    const [status, lines] = await Promise.all([this.source.status(), this.source.logs()]);
    this.broadcast("status", JSON.stringify(status));
    this.broadcast("figures", JSON.stringify(this.source.figures()));
    const log = JSON.stringify(lines);
    if (log !== this.lastLog) {
      this.lastLog = log;
      this.broadcast("log", log);
    }
  }

  private broadcast(event: string, data: string): void {
    const frame = `event: ${event}\ndata: ${data}\n\n`;
    for (const [res, live] of this.pages) {
      if (res.writableEnded) continue;
      if (live()) res.write(frame);
      else res.end();
    }
  }
}
