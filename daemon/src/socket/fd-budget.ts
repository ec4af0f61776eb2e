import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import type { ResolvedServerConfig } from "../config/index.js";
import { RUNTIME_DEFAULTS } from "../defaults.js";

/**
 * This process's soft limit on open files (RLIMIT_NOFILE), after Node raised it to the hard limit at
 * start: from /proc/self/limits on Linux, else from `ulimit -n` of a shell (which inherits the limit).
 * Undefined when unlimited or unreadable.
 */
export function openFileLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (m) return m[1] === "unlimited" ? undefined : Number(m[1]);
  } catch {
    // Not Linux: ask a shell.
  }
  try {
    const r = spawnSync("/bin/sh", ["-c", "ulimit -n"], { encoding: "utf8", timeout: 2_000 });
    const n = Number(r.stdout?.trim());
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Open file descriptors of this process (/proc/self/fd on Linux, /dev/fd elsewhere); undefined when unreadable. */
export function openFileCount(): number | undefined {
  for (const dir of ["/proc/self/fd", "/dev/fd"]) {
    try {
      // The listing itself holds one descriptor while it runs.
      return Math.max(0, readdirSync(dir).length - 1);
    } catch {
      // Try the next.
    }
  }
  return undefined;
}

/** Open files set aside for one server (see RUNTIME_DEFAULTS.fdsPerStdioServer and the others). */
export function fdsPerServer(server: ResolvedServerConfig): number {
  switch (server.transport.type) {
    case "stdio":
      return RUNTIME_DEFAULTS.fdsPerStdioServer;
    case "ws":
      return RUNTIME_DEFAULTS.fdsPerWsServer;
    default:
      return RUNTIME_DEFAULTS.fdsPerHttpServer;
  }
}

export interface ConnectionCapInput {
  /** `mcpd.maxConnections`, or the default. */
  maxConnections: number;
  /** `mcpd.fdReserve`, or the default. */
  fdReserve: number;
  /** The open-file limit; undefined: unknown or unlimited (only `maxConnections` applies). */
  limit: number | undefined;
  /** Descriptors the daemon holds with no server running and no client connected. */
  inUse: number;
  /** The configured servers (disabled ones included: `mcpd enable` must be able to start them). */
  servers: readonly ResolvedServerConfig[];
}

export interface ConnectionCap {
  /** Connections to accept at once, at least 1. */
  cap: number;
  /** What set it, for messages: `mcpd.maxConnections`, or the open-file limit and what is kept. */
  why: string;
}

/**
 * How many client connections fit: each costs one descriptor, plus a share for every `per-client` server
 * (which gets a process or session of its own per connection); what is left of the open-file limit after
 * the daemon's own descriptors, `fdReserve` and the shared servers' share is divided among them. Never
 * more than `maxConnections`, never less than 1 (so `mcpd status` can still get in).
 */
export function connectionCap(input: ConnectionCapInput): ConnectionCap {
  const configured = { cap: input.maxConnections, why: "mcpd.maxConnections" };
  if (input.limit === undefined) return configured;
  let shared = 0;
  let perConnection = 1;
  for (const s of input.servers) {
    if (s.sharing === "per-client") perConnection += fdsPerServer(s);
    else shared += fdsPerServer(s);
  }
  const kept = input.inUse + input.fdReserve + shared;
  const fit = Math.max(1, Math.floor((input.limit - kept) / perConnection));
  if (fit >= input.maxConnections) return configured;
  return { cap: fit, why: `open-file limit ${input.limit}, ${input.limit - fit * perConnection} kept for its servers and itself` };
}
