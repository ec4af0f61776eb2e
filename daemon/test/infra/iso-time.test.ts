/** isoTime: the same text as Date#toISOString, computed without the local-time path. */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isoTime } from "../../src/infra/iso-time.js";

describe("isoTime", () => {
  it("matches toISOString at the edges of days, months, years and leap days", () => {
    for (const t of [
      0,
      1,
      999,
      1000,
      951782400000,
      951868799999,
      4102444799999,
      Date.UTC(2024, 1, 29, 23, 59, 59, 999),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    ])
      expect(isoTime(t)).toBe(new Date(t).toISOString());
  });

  it("matches toISOString for any time from 1970 to 9999, and outside it", () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_198_755_200_000, max: 8_640_000_000_000_000 }), (t) => {
        expect(isoTime(t)).toBe(new Date(t).toISOString());
      }),
      { numRuns: 2_000 },
    );
  });

  it("throws a RangeError for a time that is not a finite number, as toISOString does", () => {
    for (const t of [Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1]) expect(() => isoTime(t)).toThrow(RangeError);
  });
});

describe("the daemon's own code", () => {
  it("regression: stamps times with isoTime, never Date#toISOString or #toUTCString (which load ICU's time-zone data into the daemon: ~0.8 MB)", () => {
    const src = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src");
    // The CLI's commands run in short-lived processes; iso-time.ts falls back to toISOString for years past 9999.
    const skipped = (file: string): boolean => /^(cli|config-import)\//.test(file) || file === "infra/iso-time.ts";
    const files = readdirSync(src, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts"))
      .map((f) => f.split("\\").join("/"))
      .filter((f) => !skipped(f));
    expect(files.length).toBeGreaterThan(50);
    const offenders = files.filter((f) => /\.to(ISO|UTC)String\(/.test(readFileSync(join(src, f), "utf8")));
    expect(offenders, `use isoTime in ${offenders.join(", ")}`).toEqual([]);
  });
});
