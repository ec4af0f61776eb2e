import type { LoadedConfig } from "../config/index.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";
import type { SocketLimits } from "../socket/client-limits.js";
import { connectionCap, openFileCount, openFileLimit } from "../socket/fd-budget.js";

/**
 * The client connections the daemon can afford: the open-file limit, less the daemon's own descriptors
 * (counted once it listens and before any server runs: {@link countOwnDescriptors}), `fdReserve` and the
 * servers' share, divided among connections; never more than `maxConnections`.
 */
export class ConnectionBudget {
  readonly fdLimit = openFileLimit();
  private fdsInUse = 0;

  /** Counts the daemon's own open descriptors now (call once it listens, before servers start). */
  countOwnDescriptors(): void {
    this.fdsInUse = openFileCount() ?? 0;
  }

  /** The daemon's own descriptors, as last counted. */
  get ownDescriptors(): number {
    return this.fdsInUse;
  }

  /** The socket's limits under `config`. */
  limits(config: LoadedConfig): SocketLimits {
    const s = config.settings;
    const { cap, why } = connectionCap({
      maxConnections: s.maxConnections ?? RUNTIME_DEFAULTS.maxConnections,
      fdReserve: s.fdReserve ?? RUNTIME_DEFAULTS.fdReserve,
      limit: this.fdLimit,
      inUse: this.fdsInUse,
      servers: config.servers,
    });
    return {
      maxConnections: cap,
      maxConnectionsWhy: why,
      partialLineTimeoutMs: s.partialLineTimeoutMs ?? RUNTIME_DEFAULTS.partialLineTimeoutMs,
    };
  }
}
