import type * as Undici from "undici";

/**
 * undici, loaded on first use instead of imported: it adds several MB of resident memory and tens of ms
 * of start-up to every process that imports it, and a daemon whose servers are all stdio never needs it.
 * Every HTTP exchange starts after {@link loadUndici} resolved: {@link HttpPipe} awaits it in `connect()`
 * (requests need an open pipe) and `callMCP` before its POST.
 */
let undici: typeof Undici | undefined;

/** Loads undici, once per process. Rejects only if the package cannot be loaded (not installed). */
export async function loadUndici(): Promise<void> {
  undici ??= await import("undici");
}

function loaded(): typeof Undici {
  // Unreachable through the transports' own code (see above); says what broke if a change makes it reachable.
  if (undici === undefined) throw new Error("@mcpd/transports: undici used before loadUndici() resolved");
  return undici;
}

/** undici's `request`. Call only after {@link loadUndici}. */
// Cast: a forwarding function cannot restate `request`'s generic signature; the arguments pass through unchanged.
export const request = ((...args: Parameters<typeof Undici.request>) => loaded().request(...args)) as typeof Undici.request;

/** A new undici `Agent`. Call only after {@link loadUndici}. */
export function newAgent(options: Undici.Agent.Options): Undici.Agent {
  return new (loaded().Agent)(options);
}
