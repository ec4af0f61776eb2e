import type { Logger } from "@mcpd/protocol";

/** What the signals drive. */
export interface SignalTargets {
  shutdown(reason: string): unknown;
  reload(): Promise<unknown>;
  /** Whether shutdown has begun (a reload that fails then is not worth an error line). */
  readonly shuttingDown: boolean;
}

/**
 * Installs the daemon's signal handlers: SIGTERM and SIGINT shut down, SIGHUP reloads (a failed reload keeps
 * the old config and says why). @returns the function that removes them.
 */
export function installSignals(target: SignalTargets, log: Logger): () => void {
  const onTerm = (): void => void target.shutdown("signal");
  const onHup = (): void => {
    target.reload().catch((err: Error) => {
      if (!target.shuttingDown) log.error({ err: err.message }, "reload failed; keeping the old config");
    });
  };
  process.on("SIGTERM", onTerm);
  process.on("SIGINT", onTerm);
  process.on("SIGHUP", onHup);
  return () => {
    process.off("SIGTERM", onTerm);
    process.off("SIGINT", onTerm);
    process.off("SIGHUP", onHup);
  };
}
