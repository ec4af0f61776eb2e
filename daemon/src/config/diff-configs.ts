import type { LoadedConfig, ResolvedServerConfig } from "./config-schema.js";

/** Server names grouped by what a reload would do with them. */
export interface ConfigDiff {
  /** In the new config only, in new-config order. */
  readonly added: string[];
  /** In the old config only, in old-config order. */
  readonly removed: string[];
  /** In both, with a different `hash` (anything about the server changed), in new-config order. */
  readonly changed: string[];
  /** In both with the same `hash`, in new-config order. */
  readonly unchanged: string[];
}

type ServerList = Pick<LoadedConfig, "servers"> | readonly ResolvedServerConfig[];

/**
 * Compares two configs by server name and {@link ResolvedServerConfig.hash}. Accepts loaded configs or
 * bare server lists. A server whose only change is `enabled` counts as changed.
 */
export function diffConfigs(oldConfig: ServerList, newConfig: ServerList): ConfigDiff {
  const before = new Map(serversOf(oldConfig).map((s) => [s.name, s.hash]));
  const after = serversOf(newConfig);
  const diff: ConfigDiff = { added: [], removed: [], changed: [], unchanged: [] };
  const names = new Set<string>();
  for (const server of after) {
    names.add(server.name);
    const hash = before.get(server.name);
    if (hash === undefined) diff.added.push(server.name);
    else if (hash === server.hash) diff.unchanged.push(server.name);
    else diff.changed.push(server.name);
  }
  for (const name of before.keys()) if (!names.has(name)) diff.removed.push(name);
  return diff;
}

function serversOf(config: ServerList): readonly ResolvedServerConfig[] {
  return "servers" in config ? config.servers : config;
}
