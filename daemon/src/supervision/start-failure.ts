import { SpawnError, TransportClosedError } from "@mcpd/protocol";
import { EraMismatchError } from "./era-handshake.js";

/**
 * Spawn failures no retry can fix until the config changes: the command or its working directory is
 * missing (ENOENT, ENOTDIR) or not executable (EACCES). Out of descriptors or processes (EMFILE, ENFILE,
 * EAGAIN) is a passing state: those are retried with backoff like a crash.
 */
const PERMANENT_SPAWN_ERRNOS: ReadonlySet<string> = new Set(["ENOENT", "ENOTDIR", "EACCES"]);

/** A start failure in words: a closed transport's own reason (exit code, stderr lines) without the prefix. */
export function startFailureReason(err: unknown): string {
  if (err instanceof TransportClosedError && err.reason !== undefined) return err.reason;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Whether a start failure is one no restart can fix (see {@link PERMANENT_SPAWN_ERRNOS}; a server that
 * refuses the era its `protocolEra` forces): the server is `failed` at once.
 */
export function isPermanentStartFailure(err: unknown): boolean {
  if (err instanceof EraMismatchError) return true;
  return err instanceof SpawnError && err.errno !== undefined && PERMANENT_SPAWN_ERRNOS.has(err.errno);
}
