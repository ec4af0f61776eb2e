/** `n` as at least `width` decimal digits. */
function digits(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

/**
 * `new Date(ms).toISOString()` (`2026-12-01T18:00:00.000Z`), computed from the UTC getters. Node 20's V8
 * answers `toISOString` (and `toUTCString`) through its local-time path, which opens ICU's time-zone
 * data and names on first use: about 1 MB of the daemon's resident memory, for a string that never
 * depends on the time zone. The UTC getters do not touch ICU.
 * @throws RangeError for a time that is not a finite number, as `toISOString` does.
 */
export function isoTime(ms: number): string {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  // toISOString's expanded years (+010000, -000001) are far outside anything the daemon stamps.
  if (!(year >= 0 && year <= 9999)) return d.toISOString();
  return (
    `${digits(year, 4)}-${digits(d.getUTCMonth() + 1, 2)}-${digits(d.getUTCDate(), 2)}` +
    `T${digits(d.getUTCHours(), 2)}:${digits(d.getUTCMinutes(), 2)}:${digits(d.getUTCSeconds(), 2)}.${digits(d.getUTCMilliseconds(), 3)}Z`
  );
}
