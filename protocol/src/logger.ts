/**
 * The small logging interface lower layers accept. Only the daemon writes a log; everything below it
 * logs through this shape (the daemon's logger and pino loggers satisfy it) and defaults to {@link silentLogger}.
 */
export interface Logger {
  trace(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

const noop = (): void => {};

/** A logger that drops everything. */
export const silentLogger: Logger = Object.freeze({ trace: noop, debug: noop, info: noop, warn: noop, error: noop });
