import { describe, expect, it } from "vitest";
import {
  firstLine,
  formatBytes,
  formatDuration,
  formatLatency,
  palette,
  table,
  truncate,
  useColour,
  visibleWidth,
} from "../../src/cli/format.js";
import { formatLogLine } from "../../src/cli/log-format.js";
import { base64Bytes, formatToolResult } from "../../src/cli/result-format.js";
import { renderProgress } from "../../src/cli/progress-bar.js";

describe("table", () => {
  it("aligns columns by visible width and leaves no trailing spaces", () => {
    const out = table(
      ["NAME", "STATE", "PID"],
      [
        ["github", "ready", "123"],
        ["fs", "failed", "-"],
      ],
    );
    expect(out.split("\n")).toEqual(["NAME    STATE   PID", "github  ready   123", "fs      failed  -"]);
  });

  it("measures coloured cells without their escape codes", () => {
    const c = palette(true);
    const out = table(
      ["A", "B"],
      [
        [c.green("ok"), "x"],
        ["long-cell", "y"],
      ],
      c,
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the ESC (U+001B) colour codes the table wrote.
    const lines = out.split("\n").map((l) => l.replace(/\u001b\[[0-9;]*m/g, ""));
    expect(lines).toEqual(["A          B", "ok         x", "long-cell  y"]);
    expect(visibleWidth(c.red("abc"))).toBe(3);
  });
});

describe("colour decision", () => {
  it("colours only a TTY, never with NO_COLOR, and FORCE_COLOR forces it", () => {
    expect(useColour({ isTTY: true }, {})).toBe(true);
    expect(useColour({ isTTY: false }, {})).toBe(false);
    expect(useColour({ isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(useColour({ isTTY: true }, { TERM: "dumb" })).toBe(false);
    expect(useColour({ isTTY: false }, { FORCE_COLOR: "1" })).toBe(true);
    expect(palette(false).red("x")).toBe("x");
  });
});

describe("numbers", () => {
  it("formats durations, latencies and sizes", () => {
    expect([
      formatDuration(undefined),
      formatDuration(850),
      formatDuration(12_400),
      formatDuration(303_000),
      formatDuration(7_440_000),
      formatDuration(90_000_000),
    ]).toEqual(["-", "850ms", "12s", "5m 3s", "2h 4m", "1d 1h"]);
    expect([formatLatency(null), formatLatency(0.421), formatLatency(12.34), formatLatency(1534.2)]).toEqual([
      "-",
      "0.42ms",
      "12.3ms",
      "1534ms",
    ]);
    expect([formatBytes(512), formatBytes(1536), formatBytes(3 * 1024 * 1024)]).toEqual(["512 B", "1.5 KiB", "3.0 MiB"]);
    expect(truncate("abcdef", 4)).toBe("abc…");
    expect(truncate("a\n b", 10)).toBe("a b");
    expect(firstLine("\n  First line.\nSecond")).toBe("First line.");
  });
});

describe("formatLogLine", () => {
  it("prints a pino line as time LEVEL msg key=val, without pid/hostname", () => {
    const time = new Date(2025, 0, 2, 3, 4, 5, 6).getTime();
    const line = JSON.stringify({
      level: 40,
      time,
      pid: 9,
      hostname: "h",
      msg: "server exited",
      server: "fs",
      code: 1,
      note: "two words",
      obj: { a: 1 },
    });
    expect(formatLogLine(line)).toBe('2025-01-02 03:04:05.006 WARN  server exited server=fs code=1 note="two words" obj={"a":1}');
  });

  it("passes lines that are not pino JSON through unchanged", () => {
    expect(formatLogLine("TypeError: boom")).toBe("TypeError: boom");
    expect(formatLogLine("[1,2]")).toBe("[1,2]");
  });
});

describe("formatToolResult", () => {
  it("prints text and summarises everything else", () => {
    const png = Buffer.alloc(1234, 7).toString("base64");
    const out = formatToolResult({
      content: [
        { type: "text", text: "hello\nworld" },
        { type: "image", mimeType: "image/png", data: png },
        { type: "audio", mimeType: "audio/wav", data: "AAAA" },
        { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "body" } },
        { type: "resource", resource: { uri: "file:///b.bin", blob: "AAE=" } },
        { type: "resource_link", uri: "file:///c", name: "c" },
        { type: "mystery" },
      ],
    });
    expect(out.split("\n")).toEqual([
      "hello",
      "world",
      "[image image/png 1234 bytes]",
      "[audio audio/wav 3 bytes]",
      "[resource file:///a.txt text/plain]",
      "body",
      "[resource file:///b.bin 2 bytes]",
      "[resource link file:///c (c)]",
      "[mystery content]",
    ]);
    expect(base64Bytes(png)).toBe(1234);
  });

  it("prints structured content when there is no content", () => {
    expect(formatToolResult({ content: [], structuredContent: { a: 1 } })).toBe('{\n  "a": 1\n}');
  });
});

describe("renderProgress", () => {
  it("draws a bar with percentage when the total is known", () => {
    expect(renderProgress({ progress: 5, total: 10, message: "half" }, 80, 10)).toBe("[#####-----]  50% 5/10 half");
    expect(renderProgress({ progress: 20, total: 10 }, 80, 4)).toBe("[####] 100% 20/10");
  });

  it("counts when the total is unknown, and never exceeds the width", () => {
    expect(renderProgress({ progress: 3 })).toBe("[working] 3");
    expect(renderProgress({ progress: 1, total: 2, message: "x".repeat(200) }, 40).length).toBe(39);
  });
});
