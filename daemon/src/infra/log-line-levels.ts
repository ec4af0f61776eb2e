/**
 * The numeric value of each level in a log line: pino's, as is the line's shape, so `mcpd logs`,
 * pino-pretty and the jq filters people keep for pino logs read the daemon's log. Read by the logger that
 * writes the lines and by `mcpd logs`, which prints them.
 */
export const LEVEL_VALUES = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

export type LevelName = keyof typeof LEVEL_VALUES;
