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

/** glibc's bookkeeping ahead of each block it hands out (two size words on 64-bit). */
const MALLOC_HEADER_BYTES = 16;
/** The page size of the mappings large blocks get (4 KiB on the platforms the daemon runs on). */
const PAGE_BYTES = 4096;
const MMAP_THRESHOLD_BYTES = Number(DAEMON_ALLOCATOR_ENV.MALLOC_MMAP_THRESHOLD_);

/**
 * Whether a block of `bytes` gets a mapping of its own under {@link DAEMON_ALLOCATOR_ENV} (and so goes back
 * to the system whole when freed) rather than a place in the brk heap, which only shrinks from its top.
 */
function isMappedAlone(bytes: number): boolean {
  return bytes + MALLOC_HEADER_BYTES >= MMAP_THRESHOLD_BYTES;
}

/**
 * The memory a block of `bytes` takes from the C allocator under {@link DAEMON_ALLOCATOR_ENV}, in bytes, of
 * which only the first `touched` bytes were written: a mapped block takes whole pages, and only those
 * written (64 KiB read from a socket: 68 KiB); a heap block takes its header besides. An estimate for other
 * allocators, near enough for a budget.
 */
export function allocationBytes(bytes: number, touched = bytes): number {
  if (!isMappedAlone(bytes)) return bytes + MALLOC_HEADER_BYTES;
  return Math.ceil((touched + MALLOC_HEADER_BYTES) / PAGE_BYTES) * PAGE_BYTES;
}

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
