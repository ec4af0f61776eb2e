import type { ResolvedServerConfig } from "../config/config-schema.js";
import { disabledInConfig } from "./disable-reasons.js";
import type { ServerHandle } from "./server-handle.js";

/**
 * Gives `handle` (a shared handle, or a private session: `shared` false) the changed config `cfg` of a
 * reload: disables or enables it as `cfg` says, or restarts it when it had failed or its transport changed
 * while it runs. A stopped server is not started, nor is an enabled private session: their next request
 * starts them.
 */
export function applyConfig(
  handle: ServerHandle,
  cfg: ResolvedServerConfig,
  shared: boolean,
  signal: AbortSignal | undefined,
  drainMs: number,
): Promise<void> {
  const transportChanged = cfg.transportHash !== handle.config.transportHash || cfg.protocolEra !== handle.config.protocolEra;
  const wasEnabled = handle.config.enabled;
  handle.updateConfig(cfg);
  if (!cfg.enabled) return handle.disable(disabledInConfig(cfg.name), drainMs);
  if (!wasEnabled) return handle.enable(shared);
  if (handle.state === "failed") return handle.restart("config changed", signal, drainMs);
  // A stopped server (lazy and unused, stopped when idle) keeps no session of the old config: its next use starts the new one.
  if (transportChanged && handle.state !== "stopped") return handle.restart("config changed", signal, drainMs);
  return Promise.resolve();
}
