/** What the signals drive. */
export interface SignalTargets {
  shutdown(reason: string): unknown;
  reload(): Promise<unknown>;
}

/**
 * Installs the daemon's signal handlers: SIGTERM and SIGINT shut down, SIGHUP reloads (a failed reload keeps
 * the old config, and the lifecycle logs why). @returns the function that removes them.
 */
export function installSignals(target: SignalTargets): () => void {
  const onTerm = (): void => void target.shutdown("signal");
  const onHup = (): void => {
    // The daemon logs a failed reload itself, whoever asked for it; nothing else to do here.
    target.reload().catch(() => {});
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
