import type { Logger } from "@mcpd/protocol";
import type { LogLevel } from "../config/config-schema.js";
import type { LevelName } from "./log-line-levels.js";

/**
 * What the daemon's own code asks of a logger beyond @mcpd/protocol's {@link Logger}: a pino logger (the
 * root `logger.ts` makes, or one of its children) satisfies it. Lower layers get it as a plain `Logger`.
 */
export interface DaemonLogger extends Logger {
  fatal(obj: object | string, msg?: string): void;
  /**
   * A logger whose lines carry `bindings` (`{server: "github"}`, `{client: "c12"}`) before the call's own
   * fields. Its level is `options.level` when given (settable later through {@link level}), else its
   * parent's, followed as the parent's changes.
   */
  child(bindings: Record<string, unknown>, options?: { level?: LogLevel }): DaemonLogger;
  /** Whether a call at `level` writes a line (callers skip building costly fields otherwise). */
  isLevelEnabled(level: LevelName): boolean;
  /** The current level; setting it gives this logger (and the children that follow it) a level of its own. */
  level: string;
}

const noop = (): void => {};

/**
 * A logger that writes nothing, for parts made without one (tests, embedders): its children are itself.
 * No pino here: the `mcpd` command's modules that import this file must not load it.
 */
export const silentDaemonLogger: DaemonLogger = Object.freeze({
  trace: noop,
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
  fatal: noop,
  child: () => silentDaemonLogger,
  isLevelEnabled: () => false,
  get level(): string {
    return "silent";
  },
  set level(_level: string) {},
});
