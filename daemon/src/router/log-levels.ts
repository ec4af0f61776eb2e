import { LOG_LEVELS, WireCode, type JsonObject, type JsonRpcErrorObject, type Logger, type LogLevel } from "@mcpd/protocol";
import type { ServerDirectory, Upstream } from "./upstream-port.js";

/** Whether a `notifications/message` (its `params`) is at or above the level a connection asked for. */
export function wantsLog(asked: LogLevel | undefined, params: JsonObject | undefined): boolean {
  if (asked === undefined) return true;
  const level = params?.level;
  return typeof level !== "string" || LOG_LEVELS.indexOf(level as LogLevel) >= LOG_LEVELS.indexOf(asked);
}

/** The level of a `logging/setLevel` request's params, or the -32602 error naming the levels. */
export function levelOf(params: JsonObject | undefined): LogLevel | JsonRpcErrorObject {
  const level = params?.level;
  if (typeof level === "string" && (LOG_LEVELS as readonly string[]).includes(level)) return level as LogLevel;
  return { code: WireCode.InvalidParams, message: `logging/setLevel: "level" must be one of ${LOG_LEVELS.join(", ")}` };
}

/** A connection as the logging levels see it: the level it asked for, and which servers it sees. */
export interface LevelViewer {
  readonly logLevel: LogLevel | undefined;
  views(handle: Upstream): boolean;
}

/**
 * Logging levels of shared servers: several connections may ask one server for different levels with
 * `logging/setLevel`; the server is set to the most verbose of them (each connection then gets only the
 * messages at or above its own level), and only when that changes.
 */
export class LogLevels {
  /** The level each server was last set to, to avoid redundant setLevel calls. */
  private readonly upstream = new Map<string, LogLevel>();

  constructor(
    private readonly servers: Pick<ServerDirectory, "get">,
    private readonly viewers: () => Iterable<LevelViewer>,
    private readonly log: Logger,
  ) {}

  /** Sets the server to the most verbose level any connection viewing it asked for. */
  relevel(server: string): void {
    const handle = this.servers.get(server);
    if (handle?.state !== "ready" || !handle.client?.capabilities.logging) return;
    let best: number | undefined;
    for (const s of this.viewers()) {
      if (s.logLevel === undefined || !s.views(handle)) continue;
      const i = LOG_LEVELS.indexOf(s.logLevel);
      if (best === undefined || i < best) best = i;
    }
    if (best === undefined) return;
    const level = LOG_LEVELS[best] as LogLevel;
    if (this.upstream.get(server) === level) return;
    this.upstream.set(server, level);
    handle.client
      .setLoggingLevel(level, { timeout: 10_000 })
      .catch((err: Error) => this.log.debug({ server, err: err.message }, "setLevel failed"));
  }

  /** A connection left: every server set before gets the level of those that remain. */
  relevelAll(): void {
    for (const server of this.upstream.keys()) this.relevel(server);
  }

  /** A restarted server lost its level: set it again. */
  restore(server: string): void {
    this.upstream.delete(server);
    this.relevel(server);
  }
}
