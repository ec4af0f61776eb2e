import { CONFIG_DEFAULTS } from "../defaults.js";
import type { HttpSettings } from "./config-schema.js";

/** The HTTP front end's settings with every default filled in; `mcpd.http` (config-file-schema.ts) overrides them key by key. */
export function defaultHttpSettings(): HttpSettings {
  return { ...CONFIG_DEFAULTS.http, allowedHosts: [] };
}

/** `MCPD_HTTP_PORT`, when set, overrides `mcpd.http.port` (0: any free port). Undefined when unset or invalid. */
export function httpPortFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.MCPD_HTTP_PORT;
  if (raw === undefined || !/^\d{1,5}$/.test(raw)) return undefined;
  const n = Number(raw);
  return n <= 65_535 ? n : undefined;
}
