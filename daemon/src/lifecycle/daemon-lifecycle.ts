import { silentLogger, type Logger } from "@mcpd/protocol";
import { ReloadQueue } from "./reload-queue.js";
import { shuttingDownError } from "./shutting-down-error.js";

/** What the lifecycle drives: the daemon's own reload and teardown. */
export interface LifecycleParts<T> {
  /**
   * One reload (re-read the config, apply it). `signal` aborts when shutdown begins: from then on the
   * reload must start nothing (no server, no listener, no filters) and settle soon.
   */
  reload(signal: AbortSignal): Promise<T>;
  /** Ends every part of the daemon; called once, when no reload runs any more. */
  teardown(reason: string): Promise<void>;
  logger?: Logger;
}

/**
 * The running daemon's lifecycle after start: reloads, whatever asks for them (SIGHUP, `mcpd reload`,
 * `mcpd/reload`, an embedder), run one at a time through one {@link ReloadQueue}; shutdown happens once,
 * and once it has begun nothing more starts: waiting reloads fail with MCPD_SHUTTING_DOWN, the running
 * one is abandoned (and has settled) before the teardown, which ends whatever it had started.
 */
export class DaemonLifecycle<T> {
  /** Resolves with the exit code once the daemon has shut down. */
  readonly done: Promise<number>;
  private resolveDone: (code: number) => void = () => {};
  private readonly queue: ReloadQueue<T>;
  private stopping: Promise<number> | undefined;
  private readonly log: Logger;

  constructor(private readonly parts: LifecycleParts<T>) {
    this.log = parts.logger ?? silentLogger;
    this.queue = new ReloadQueue(async (signal) => {
      try {
        return await parts.reload(signal);
      } catch (err) {
        if (signal.aborted) this.log.info({}, "reload abandoned: mcpd is shutting down");
        // In the log whoever asked (SIGHUP, `mcpd reload`, the dashboard); the asker gets the error too.
        else this.log.error({ err: (err as Error).message }, "reload failed; keeping the old config");
        throw err;
      }
    });
    this.done = new Promise<number>((resolve) => (this.resolveDone = resolve));
  }

  /** Whether shutdown has begun. */
  get shuttingDown(): boolean {
    return this.stopping !== undefined;
  }

  /**
   * Reloads the config: at once, or after the reload that runs now (sharing the next one with every
   * caller that asks meanwhile). Rejects with the reload's error, or MCPD_SHUTTING_DOWN once shutdown began.
   */
  reload(): Promise<T> {
    if (this.queue.running && !this.queue.closed) {
      this.log.info({ waiting: this.queue.waiting + 1 }, "reload waits for the one in progress");
    }
    return this.queue.request();
  }

  /** Shuts the daemon down (once; later calls get the same promise). Resolves with the exit code. */
  shutdown(reason = "shutdown"): Promise<number> {
    this.stopping ??= this.stop(reason);
    return this.stopping;
  }

  private async stop(reason: string): Promise<number> {
    this.log.info({ reason }, "mcpd shutting down");
    await this.queue.close(shuttingDownError());
    await this.parts.teardown(reason);
    this.resolveDone(0);
    return 0;
  }
}
