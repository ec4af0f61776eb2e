import { lastStderrLine, type CloseInfo } from "@mcpd/transports";
import { StderrHistory } from "./stderr-history.js";

/** A transport that keeps its process's last stderr lines (stdio does). */
interface StderrSource {
  stderrTail(n?: number): string[];
}

/** How a stdio run ended, for the marker line of the stderr history. */
function runEnd(info: CloseInfo, pid: number | undefined): string {
  const proc = pid === undefined ? "process" : `process ${pid}`;
  if (info.expected) return `${proc} stopped by mcpd`;
  if (info.exitCode !== undefined && info.exitCode !== null) return `${proc} exited with code ${info.exitCode}`;
  if (info.signal) return `${proc} was killed by ${info.signal}`;
  return `${proc} ended: ${info.reason}`;
}

/**
 * One server's stderr across its runs: the lines of ended runs in a bounded {@link StderrHistory}, and
 * those of the running process read from its transport until the run ends and they join the history.
 */
export class ServerStderr {
  /** stderr of ended runs; the running process's lines are read from its transport. */
  private readonly history: StderrHistory;
  /** The transport whose stderr is not in the history yet (the live run), if it keeps stderr. */
  private live: StderrSource | undefined;

  /** At most `maxLines` lines and `maxBytes` UTF-8 bytes of ended runs are kept. */
  constructor(maxLines: number, maxBytes: number) {
    this.history = new StderrHistory(maxLines, maxBytes);
  }

  /** A run starts on `transport`. Returns whether it keeps stderr (then its end is to be told to {@link runEnded}). */
  runStarting(transport: object): boolean {
    const keeps = typeof (transport as { stderrTail?: unknown }).stderrTail === "function";
    if (keeps) this.live = transport as StderrSource;
    return keeps;
  }

  /** The run on `transport` ended (its close event, which fires once): its lines join the history, with how it ended. */
  runEnded(transport: object, info: CloseInfo, pid: number | undefined): void {
    this.history.endRun(info.stderrTail ?? [], runEnd(info, pid));
    if (this.live === transport) this.live = undefined;
  }

  /** The run on `transport` never spawned (so no close event): the history still says what happened. */
  spawnFailed(transport: object, why: string): void {
    if (this.live === transport) this.live = undefined;
    this.history.endRun([], `start failed: ${why}`);
  }

  /**
   * The server's last stderr lines (at most `n`), oldest first: those of its earlier runs (each followed
   * by a `--- mcpd: ... ---` marker saying how it ended), then the running process's.
   */
  tail(n: number): string[] {
    return this.history.tail(n, this.live?.stderrTail(n) ?? []);
  }

  /**
   * The stderr line that best says what the server last reported: the running process's last line,
   * else the line of the last ended run that states its error (see stderrHeadline).
   */
  get last(): string | undefined {
    const live = this.live?.stderrTail(5);
    return (live !== undefined ? lastStderrLine(live) : undefined) ?? this.history.headline;
  }
}
