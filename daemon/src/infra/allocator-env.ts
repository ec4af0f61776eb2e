/**
 * glibc malloc settings for the daemon process, so its resident memory returns near its baseline after a
 * load ends. glibc serves blocks under its mmap threshold from the brk heap, which only shrinks from the
 * top, and by default raises that threshold to the largest block freed so far: after many connections
 * held large lines, Node's 64 KiB socket reads stay resident, fragmented, for good (measured: 222 MiB
 * left after 200 connections of 4 MiB lines against a 66 MiB baseline; 79 MiB with these settings, and no
 * measurable change in the daemon's CPU per relayed call). Other C libraries ignore these variables.
 */
export const DAEMON_ALLOCATOR_ENV = {
  /** Blocks of 64 KiB and more are mapped on their own and given back whole when freed. */
  MALLOC_MMAP_THRESHOLD_: "65536",
  /** Free memory above 128 KiB at the top of the heap is returned to the system. */
  MALLOC_TRIM_THRESHOLD_: "131072",
} as const;

/** `env` plus {@link DAEMON_ALLOCATOR_ENV}, where the user has not set those variables themselves. */
export function withAllocatorEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const [k, v] of Object.entries(DAEMON_ALLOCATOR_ENV)) if (!hasValue(out, k)) out[k] = v;
  return out;
}

/** Whether `env` lacks one of {@link DAEMON_ALLOCATOR_ENV} (a value the user set, whatever it is, counts as set). */
export function lacksAllocatorEnv(env: NodeJS.ProcessEnv): boolean {
  return Object.keys(DAEMON_ALLOCATOR_ENV).some((k) => !hasValue(env, k));
}

function hasValue(env: NodeJS.ProcessEnv, key: string): boolean {
  return env[key] !== undefined && env[key] !== "";
}
