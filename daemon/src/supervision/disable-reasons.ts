/**
 * The `stateReason` of a disabled server: who disabled it and how to enable it again. It is what
 * `mcpd status` shows and what a call to the server is refused with (-32060).
 */
import { isoTime } from "../infra/iso-time.js";

/** Disabled by `mcpd disable` (the `mcpd/disable` control method) at `at`. */
export function disabledByCommand(server: string, at: Date = new Date()): string {
  return `disabled by mcpd disable at ${isoTime(at.getTime())}; run \`mcpd enable ${server}\` to enable it`;
}

/** Disabled by its config entry (`"enabled": false`), at start or by a reload. */
export function disabledInConfig(server: string): string {
  return (
    'disabled in the config file ("enabled": false); set "enabled": true and run `mcpd reload`, ' +
    `or run \`mcpd enable ${server}\` (until the config changes)`
  );
}
