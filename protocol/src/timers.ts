/**
 * The longest delay Node's timers keep, in ms (2^31 - 1, about 24.8 days). A longer one (or `Infinity`)
 * fires after 1 ms with a warning, so a deadline at or past it means "none" to every caller here.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Whether a timeout in ms is a deadline a timer can keep: more than 0 and less than {@link MAX_TIMER_MS}.
 * Anything else (0, `Infinity`, 2^31 ms and more) means none: every timer mcpd arms asks this first.
 */
export function hasDeadline(timeoutMs: number): boolean {
  return timeoutMs > 0 && timeoutMs < MAX_TIMER_MS;
}

/**
 * What a timeout in ms may be: `"non-negative"`, a number >= 0 where 0 and `Infinity` mean none (the
 * transports, the JSON-RPC peer); `"positive"`, a number > 0 where `Infinity` means none (the client SDK,
 * whose 0 would time every request out at once).
 */
export type TimeoutRule = "non-negative" | "positive";

const EXPECTED: Readonly<Record<TimeoutRule, string>> = {
  "non-negative": "a number of ms >= 0 (0 or Infinity for none)",
  positive: "a positive number of ms",
};

/**
 * `value` when it is a timeout in ms under `rule` (default `"non-negative"`).
 * @param name what the value is, as the message names it: `timeout`, `HTTP transport: "timeout"`,
 *   `request "tools/call": timeout`
 * @param error the class thrown (default `RangeError`; `ConfigError` for a config's field, `TypeError` for an option)
 * @throws `error` with the message `<name> must be a number of ms >= 0 (0 or Infinity for none), got <value>`
 *   (`... must be a positive number of ms, got <value>` under `"positive"`)
 */
export function checkTimeoutMs(
  value: unknown,
  name: string,
  rule: TimeoutRule = "non-negative",
  error: new (message: string) => Error = RangeError,
): number {
  if (typeof value === "number" && (rule === "positive" ? value > 0 : value >= 0)) return value;
  throw new error(`${name} must be ${EXPECTED[rule]}, got ${String(value)}`);
}
