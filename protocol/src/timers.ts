/**
 * The longest delay Node's timers keep, in ms (2^31 - 1, about 24.8 days). A longer one (or `Infinity`)
 * fires after 1 ms with a warning, so a deadline at or past it means "none" to every caller here.
 */
export const MAX_TIMER_MS = 2_147_483_647;
