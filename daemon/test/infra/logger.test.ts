/**
 * The daemon's root logger (pino): its line shape (so `mcpd logs` and pino tools read it), levels, child
 * loggers, redaction applied by the root itself, errors, values JSON cannot hold, and the scrubber.
 * Logging never throws.
 */
import { describe, expect, it } from "vitest";
import { formatLogLine } from "../../src/cli/log-format.js";
import { palette } from "../../src/cli/format.js";
import type { LogLevel } from "../../src/config/index.js";
import { createRootLogger, LEVEL_VALUES } from "../../src/infra/logger.js";

/** A destination that keeps what it is given, and counts pino's synchronous flushes. */
function sink(): { chunks: string[]; flushes: number; write(chunk: string): boolean; flushSync(): void } {
  const chunks: string[] = [];
  return {
    chunks,
    flushes: 0,
    write(chunk: string) {
      chunks.push(chunk);
      return true;
    },
    flushSync() {
      this.flushes++;
    },
  };
}

/** The root logger over `s`, as the daemon makes it. */
function logger(level: LogLevel, s: ReturnType<typeof sink>, pid = 1) {
  return createRootLogger(level, s, pid).log;
}

/** The one line `write` made the logger write, parsed. */
function only(s: { chunks: string[] }): Record<string, unknown> {
  expect(s.chunks).toHaveLength(1);
  const chunk = s.chunks[0] as string;
  expect(chunk.endsWith("\n")).toBe(true);
  // One line per call, whatever the values hold.
  expect(chunk.slice(0, -1)).not.toContain("\n");
  return JSON.parse(chunk) as Record<string, unknown>;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("the root logger (pino)", () => {
  it("writes pino's line: level, ISO time, pid, the fields in order (a field named pid as _pid), then msg", () => {
    const s = sink();
    logger("info", s, 4242).info({ server: "github", pid: 1, restarts: 2 }, "server ready");
    const line = s.chunks[0] as string;
    expect(line).toMatch(/^\{"level":30,"time":"[^"]+","pid":4242,"server":"github","restarts":2,"_pid":1,"msg":"server ready"\}\n$/);
    expect(only(s).time).toMatch(ISO);
    expect(Math.abs(Date.parse(only(s).time as string) - Date.now())).toBeLessThan(60_000);
  });

  it("a string-only call is the message; a msg field stands in for a missing message; no key is written twice, a call's own level/time/pid kept as _level/_time/_pid", () => {
    const s = sink();
    const log = logger("trace", s);
    log.debug("plain text");
    log.info({ msg: "from the field", level: 99, time: "x", pid: 4242 });
    log.warn({ msg: "field" }, "argument wins");
    const [a, b, c] = s.chunks.map((l) => l.trimEnd());
    expect(a).toBe(`{"level":20,"time":${JSON.stringify(JSON.parse(a as string).time)},"pid":1,"msg":"plain text"}`);
    expect(JSON.parse(b as string)).toMatchObject({ level: 30, pid: 1, msg: "from the field", _level: 99, _time: "x", _pid: 4242 });
    expect((b as string).match(/"level"/g)).toHaveLength(1);
    expect((b as string).match(/"time"/g)).toHaveLength(1);
    expect((b as string).match(/"pid"/g)).toHaveLength(1);
    expect(JSON.parse(c as string).msg).toBe("argument wins");
    expect((c as string).match(/"msg"/g)).toHaveLength(1);
  });

  it.each([
    ["trace", [10, 20, 30, 40, 50, 60]],
    ["info", [30, 40, 50, 60]],
    ["error", [50, 60]],
    ["fatal", [60]],
    ["silent", []],
  ] as const)("at level %s writes only the levels at or above it", (level, written) => {
    const s = sink();
    const log = logger(level, s);
    log.trace("t");
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
    log.fatal("f");
    expect(s.chunks.map((l) => JSON.parse(l).level)).toEqual(written);
    for (const [name, value] of Object.entries(LEVEL_VALUES))
      expect(log.isLevelEnabled(name as keyof typeof LEVEL_VALUES)).toBe(written.includes(value as never));
  });

  it("masks every secret field (a strong secret name, env, headers), top level and one object down, without touching the caller's object", () => {
    const s = sink();
    const fields = {
      env: { GITHUB_TOKEN: "ghp_secret" },
      headers: { Authorization: "Bearer abc" },
      token: "t0",
      password: "p0",
      secret: "s0",
      server: {
        name: "github",
        env: { K: "v" },
        headers: { X: "y" },
        authorization: "Basic zz",
        Authorization: "Bearer zz",
        token: "t1",
        password: "p1",
        secret: "s1",
      },
      // Regression: a top-level authorization was written as it was (the old fixed list had it one level down only).
      authorization: "Bearer top-level",
      tokenFile: "/home/me/.mcpd/http-token",
      session: "sse-3",
      list: [{ token: "two levels down" }],
      keep: "visible",
    };
    const before = JSON.stringify(fields);
    logger("info", s).info(fields, "m");
    const line = only(s);
    expect(line).toMatchObject({
      env: "***",
      headers: "***",
      token: "***",
      password: "***",
      secret: "***",
      server: {
        name: "github",
        env: "***",
        headers: "***",
        authorization: "***",
        Authorization: "***",
        token: "***",
        password: "***",
        secret: "***",
      },
      authorization: "***",
      // Not secrets' names: about a secret (a file), or a weak word naming mcpd's own ids.
      tokenFile: "/home/me/.mcpd/http-token",
      session: "sse-3",
      list: [{ token: "two levels down" }],
      keep: "visible",
    });
    for (const secret of ["ghp_secret", "Bearer abc", "t0", "p0", "s0", "Basic zz", "Bearer zz", "t1", "p1", "s1", "Bearer top-level"])
      expect(s.chunks[0]).not.toContain(secret);
    expect(JSON.stringify(fields)).toBe(before);
  });

  it("masks the redacted properties of an error as it does an object's (headers, token on err, or an error logged alone)", () => {
    const s = sink();
    const log = logger("info", s);
    const err = Object.assign(new Error("x"), { headers: { authorization: "Bearer sk-live-1" }, token: "tok-err-1", code: "E_X" });
    log.warn({ err }, "m");
    log.error(Object.assign(new Error("y"), { token: "tok-err-2", env: { K: "env-value-3" } }));
    const [a, b] = s.chunks.map((l) => JSON.parse(l));
    expect(a.err).toMatchObject({ type: "Error", message: "x", headers: "***", token: "***", code: "E_X" });
    expect(b).toMatchObject({ err: { message: "y", token: "***", env: "***" }, msg: "y" });
    for (const secret of ["sk-live-1", "tok-err-1", "tok-err-2", "env-value-3"]) expect(s.chunks.join("")).not.toContain(secret);
    // The caller's error is left as it was.
    expect(err.token).toBe("tok-err-1");
  });

  it("pino's redact masks the known deeper paths: a request's headers kept by an HTTP library's error", () => {
    const s = sink();
    const headers = { Authorization: "Bearer deep-1", accept: "application/json" };
    const err = Object.assign(new Error("request failed"), { config: { url: "https://h/mcp", headers } });
    logger("info", s).error({ err }, "m");
    expect(only(s)).toMatchObject({ err: { message: "request failed", config: { url: "https://h/mcp", headers: "***" } } });
    expect(s.chunks[0]).not.toContain("deep-1");
    expect(err.config.headers.Authorization).toBe("Bearer deep-1");
  });

  it("writes errors as pino does (type, message and stack with their causes, own fields), under err and nested", () => {
    const s = sink();
    const log = logger("info", s);
    const cause = new RangeError("inner");
    const err = Object.assign(new Error("boom", { cause }), { code: "E_BOOM", errno: -2 });
    log.error({ err, nested: { e: new TypeError("deep") }, alsoErr: new SyntaxError("top") }, "failed");
    log.error(new Error("alone"));
    const [a, b] = s.chunks.map((l) => JSON.parse(l));
    expect(a.err).toMatchObject({ type: "Error", message: "boom: inner", code: "E_BOOM", errno: -2 });
    expect(a.err.stack).toContain("Error: boom");
    expect(a.err.stack).toContain("caused by: RangeError: inner");
    expect(a.nested.e).toMatchObject({ type: "TypeError", message: "deep" });
    expect(a.alsoErr).toMatchObject({ type: "SyntaxError", message: "top" });
    expect(b).toMatchObject({ err: { type: "Error", message: "alone" }, msg: "alone" });
  });

  it("never throws: cycles, BigInt, throwing getters and toJSON, functions and symbols are written as far as they can be", () => {
    const s = sink();
    const log = logger("info", s);
    const cyclic: Record<string, unknown> = { name: "c" };
    cyclic.self = cyclic;
    const getter = Object.defineProperty({ ok: 1 }, "bad", {
      enumerable: true,
      get() {
        throw new Error("getter says no");
      },
    });
    const badJson = {
      toJSON: () => {
        throw new Error("toJSON says no");
      },
    };
    expect(() => log.info({ cyclic, n: 10n, getter, badJson, f: () => 1, sym: Symbol("s"), u: undefined }, "odd values")).not.toThrow();
    const line = only(s);
    expect(line).toMatchObject({ cyclic: { name: "c", self: "[Circular]" }, n: 10, msg: "odd values" });
    // What JSON cannot hold at all is written as a string saying so, never thrown.
    expect(typeof line.getter).toBe("string");
    expect(typeof line.badJson).toBe("string");
    expect(line).not.toHaveProperty("f");
    expect(line).not.toHaveProperty("u");
  });

  it("never throws when what is thrown cannot even be made a string (a null-prototype object)", () => {
    const s = sink();
    const odd = Object.defineProperty({}, "a", {
      enumerable: true,
      get() {
        throw Object.create(null);
      },
    });
    expect(() => logger("info", s).info(odd, "m")).not.toThrow();
    expect(s.chunks).toHaveLength(1);
    expect(JSON.parse(s.chunks[0] as string).level).toBe(30);
  });

  it("never throws for a Proxy that throws on every trap; the line says the value could not be logged", () => {
    const s = sink();
    const hostile = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error("no keys");
        },
        get() {
          throw new Error("no get");
        },
      },
    );
    expect(() => logger("info", s).warn(hostile, "m")).not.toThrow();
    expect(only(s)).toMatchObject({ level: 40, msg: expect.stringContaining("unloggable value") });
  });

  it("a shared (not cyclic) object is written twice; a BigInt as its digits", () => {
    const s = sink();
    const shared = { a: 1 };
    logger("info", s).info({ x: shared, y: shared, big: 2n ** 70n });
    expect(only(s)).toMatchObject({ x: { a: 1 }, y: { a: 1 } });
    expect(s.chunks[0]).toContain(`"big":${(2n ** 70n).toString()}`);
  });

  it("passes every finished line through the scrubber set with setScrubber; a line it cannot scrub is dropped", () => {
    const s = sink();
    const root = createRootLogger("info", s);
    const log = root.log;
    log.info({ note: "before" }, "token ghp_123");
    root.setScrubber((line) => line.replaceAll("ghp_123", "***"));
    log.info({ note: "ghp_123 in a field" }, "token ghp_123");
    // Children (made before or after) write through the root: their bindings are scrubbed too.
    log.child({ server: "ghp_123-ish" }).warn({ deep: { deeper: ["ghp_123"] } }, "nested");
    expect(s.chunks[0]).toContain("ghp_123");
    expect(s.chunks[1]).not.toContain("ghp_123");
    expect(JSON.parse(s.chunks[1] as string)).toMatchObject({ note: "*** in a field", msg: "token ***" });
    expect(JSON.parse(s.chunks[2] as string)).toMatchObject({ server: "***-ish", deep: { deeper: ["***"] } });
    // A scrubber that throws: the line (which may hold what it was to mask) is replaced by a notice.
    root.setScrubber(() => {
      throw new Error("scrubber broke");
    });
    expect(() => log.warn({ note: "ghp_123" }, "token ghp_123")).not.toThrow();
    expect(s.chunks[3]).not.toContain("ghp_123");
    expect(JSON.parse(s.chunks[3] as string)).toMatchObject({ level: 40, msg: expect.stringContaining("scrubber broke") });
    // A scrubber that cannot mask the line (the value -> value scrubber's undefined): dropped the same way.
    root.setScrubber(() => undefined);
    log.error({ note: "ghp_123" }, "token ghp_123");
    expect(s.chunks[4]).not.toContain("ghp_123");
    expect(JSON.parse(s.chunks[4] as string)).toMatchObject({ level: 50, msg: expect.stringContaining("a log line was dropped") });
  });

  it("children: their bindings on every line; a level of their own, or their parent's followed as it changes", () => {
    const s = sink();
    const root = logger("info", s);
    const server = root.child({ server: "gh" });
    const loud = root.child({ server: "dbg" }, { level: "debug" });
    const client = server.child({ client: "c1" });
    server.debug("hidden");
    loud.debug("shown at its own level");
    client.info({ n: 1 }, "both bindings");
    root.level = "debug";
    server.debug("follows the root");
    root.level = "warn";
    server.info("hidden again");
    loud.debug("keeps its own");
    client.level = "trace";
    client.trace("a grandchild's own level");
    expect(s.chunks.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ level: 20, server: "dbg", msg: "shown at its own level" }),
      expect.objectContaining({ level: 30, server: "gh", client: "c1", n: 1, msg: "both bindings" }),
      expect.objectContaining({ level: 20, server: "gh", msg: "follows the root" }),
      expect.objectContaining({ level: 20, server: "dbg", msg: "keeps its own" }),
      expect.objectContaining({ level: 10, client: "c1", msg: "a grandchild's own level" }),
    ]);
    expect(root.isLevelEnabled("info")).toBe(false);
    expect(client.isLevelEnabled("trace")).toBe(true);
  });

  it("a fatal line flushes the destination synchronously (its writer holds nothing once the call returns)", () => {
    const s = sink();
    const log = logger("info", s);
    log.error("not flushed");
    expect(s.flushes).toBe(0);
    log.fatal({ origin: "uncaughtException" }, "mcpd crashed");
    expect(s.flushes).toBe(1);
    expect(JSON.parse(s.chunks[1] as string)).toMatchObject({ level: 60, msg: "mcpd crashed" });
  });

  it("writes lines `mcpd logs` prints as time LEVEL msg key=val", () => {
    const s = sink();
    logger("info", s, 77).warn({ server: "github", restarts: 3 }, "server crashed");
    const pretty = formatLogLine((s.chunks[0] as string).trimEnd(), palette(false));
    expect(pretty).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z WARN +server crashed server=github restarts=3$/);
  });
});
