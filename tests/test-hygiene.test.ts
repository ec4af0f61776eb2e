/**
 * The test-hygiene guard: reads every test file and test helper (tests/, <pkg>/test/; not benchmarks, the
 * soak run or fixtures) through a real parse and fails on
 *   - a fixed sleep: a promise that only a timer settles (`await new Promise((r) => setTimeout(r, 50))`,
 *     `setTimeout(() => resolve(x), 100)`), `node:timers/promises`, `Atomics.wait`, a call to `sleep()` or
 *     `delay()`. A test waits for the event it expects (a message, a log line, a state, an exit) with a
 *     generous bound (tests/helpers/process.ts waitFor), or runs the clock of the code under test itself
 *     (vitest's fake timers); a timer that bounds such a wait (it rejects, or races an event) is fine;
 *   - a timer-paced step: `setInterval` (a peer that sends every 400 ms makes the test a race against the
 *     clock; step it by hand instead);
 *   - a focused or skipped test: `.only`, `.skip`, `.todo` on it/test/describe/suite. `skipIf`/`runIf`
 *     on the environment, and a test's own `skip("why")`, say why and stay.
 * Strings are not code: a child's `-e "setTimeout(...)"` script is not a wait of the test's.
 *
 * The check is a pure function over a file's text, so the same test proves it catches each pattern on
 * synthetic sources before it passes on the real ones.
 */
import { describe, expect, it } from "vitest";
import { parseSync } from "vite";
import { loadTestSources } from "./helpers/workspace-sources.js";

// ---------------------------------------------------------------------------------------------------
// The pure check

export interface Finding {
  rule: "fixed-sleep" | "timer-paced" | "focused-or-skipped";
  line: number;
  what: string;
}

interface AstNode {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

const isNode = (value: unknown): value is AstNode =>
  typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";

/** The name a callee is known by: `setTimeout`, `realSetTimeout`, `globalThis.setTimeout` -> its last part. */
function calleeName(callee: unknown): string | undefined {
  if (!isNode(callee)) return undefined;
  if (callee.type === "Identifier") return callee.name as string;
  if (callee.type === "MemberExpression" && isNode(callee.property) && callee.computed !== true) return callee.property.name as string;
  return undefined;
}

const isTimer = (node: AstNode): boolean => node.type === "CallExpression" && /set(Timeout|Interval)$/i.test(calleeName(node.callee) ?? "");

const TEST_APIS = new Set(["it", "test", "describe", "suite"]);
const FOCUS_OR_SKIP = new Set(["only", "skip", "todo"]);

/** The identifier at the root of a member chain (`it` of `it.concurrent.only`). */
function chainRoot(node: AstNode): string | undefined {
  let at: AstNode = node;
  while (at.type === "MemberExpression" && isNode(at.object)) at = at.object;
  return at.type === "Identifier" ? (at.name as string) : undefined;
}

/** Every child node with the key it hangs from. */
function* children(node: AstNode): Generator<AstNode> {
  for (const [key, child] of Object.entries(node)) {
    if (key === "parent") continue;
    if (Array.isArray(child)) {
      for (const item of child) if (isNode(item)) yield item;
    } else if (isNode(child)) yield child;
  }
}

/**
 * Whether the executor of `new Promise(executor)` settles it only from timers: every use of its
 * `resolve` is a timer's callback, or inside one. Zero uses (a promise only rejected by a timer) is a bound.
 */
function onlyTimersResolve(executor: AstNode): boolean {
  const params = executor.params as AstNode[] | undefined;
  const first = params?.[0];
  if (first?.type !== "Identifier") return false;
  const name = first.name as string;
  let uses = 0;
  let outsideTimers = 0;
  const visit = (node: AstNode, inTimer: boolean): void => {
    if (node.type === "Identifier" && node.name === name) {
      uses++;
      if (!inTimer) outsideTimers++;
    }
    const timerArgs = isTimer(node) ? new Set((node.arguments as AstNode[]).slice(0, 1)) : undefined;
    for (const child of children(node)) visit(child, inTimer || (timerArgs?.has(child) ?? false));
  };
  visit(executor.body as AstNode, false);
  return uses > 0 && outsideTimers === 0;
}

/** `Promise.race([...])`: a promise in its list bounds the others, it is not waited for on its own. */
const isRace = (node: AstNode): boolean =>
  node.type === "CallExpression" &&
  isNode(node.callee) &&
  node.callee.type === "MemberExpression" &&
  isNode(node.callee.object) &&
  node.callee.object.name === "Promise" &&
  calleeName(node.callee) === "race";

/** The fixed sleeps and focused or skipped tests in one file's text. */
export function findHygieneIssues(file: string, code: string): { findings: Finding[]; errors: string[] } {
  const lang = /\.(m|c)?tsx?$/.test(file) ? "ts" : "js";
  const parsed = parseSync(file, code, { lang, sourceType: "module" });
  const findings: Finding[] = [];
  const lineOf = (pos: number): number => code.slice(0, pos).split("\n").length;
  const add = (rule: Finding["rule"], node: AstNode): void => {
    const text = code.slice(node.start, node.end).replace(/\s+/g, " ");
    findings.push({ rule, line: lineOf(node.start), what: text.length > 100 ? `${text.slice(0, 97)}...` : text });
  };
  const visit = (node: AstNode, parents: AstNode[]): void => {
    switch (node.type) {
      case "NewExpression": {
        const executor = (node.arguments as AstNode[])[0];
        const [parent, grandparent] = [parents.at(-1), parents.at(-2)];
        const raced = parent?.type === "ArrayExpression" && grandparent !== undefined && isRace(grandparent);
        if (calleeName(node.callee) === "Promise" && isNode(executor) && /Function/.test(executor.type) && !raced) {
          if (onlyTimersResolve(executor)) add("fixed-sleep", node);
        }
        break;
      }
      case "ImportDeclaration":
      case "ImportExpression":
        if (isNode(node.source) && /^(node:)?timers\/promises$/.test(String(node.source.value))) add("fixed-sleep", node);
        break;
      case "CallExpression": {
        const name = calleeName(node.callee);
        const callee = node.callee as AstNode;
        if (callee.type === "Identifier" && (name === "sleep" || name === "delay")) add("fixed-sleep", node);
        if (/setInterval$/i.test(name ?? "")) add("timer-paced", node);
        if (callee.type === "MemberExpression" && chainRoot(callee) === "Atomics" && name === "wait") add("fixed-sleep", node);
        if (name === "require" && isNode((node.arguments as AstNode[])[0])) {
          const spec = String(((node.arguments as AstNode[])[0] as AstNode).value);
          if (/^(node:)?timers\/promises$/.test(spec)) add("fixed-sleep", node);
        }
        break;
      }
      case "MemberExpression":
        if (
          node.computed !== true &&
          isNode(node.property) &&
          FOCUS_OR_SKIP.has(node.property.name as string) &&
          TEST_APIS.has(chainRoot(node) ?? "")
        ) {
          add("focused-or-skipped", node);
        }
        break;
    }
    parents.push(node);
    for (const child of children(node)) visit(child, parents);
    parents.pop();
  };
  visit(parsed.program as unknown as AstNode, []);
  return { findings, errors: parsed.errors.map((e) => e.message) };
}

// ---------------------------------------------------------------------------------------------------
// The allowlist: only where the wait is itself the behaviour under test, or the one poll.

interface Allowed {
  rule: Finding["rule"];
  /** Text the finding's source starts with. */
  what: string;
  why: string;
  /** Not yet checked for being stale: the file is being rewritten elsewhere. */
  transitional?: true;
}

export const ALLOWED: Readonly<Record<string, readonly Allowed[]>> = {
  "tests/helpers/process.ts": [
    {
      rule: "fixed-sleep",
      what: "new Promise((resolve) => realSetTimeout(resolve, intervalMs))",
      why: "waitFor's poll: the one place a test looks again later; it ends when the condition holds, with a bound",
    },
  ],
  "transports/test/stdio/stdio-backpressure.test.ts": [
    {
      rule: "timer-paced",
      what: "setInterval(sample, 2)",
      why: "samples the buffered byte counts while 50 MiB flow (a measurement); the test waits for flood_done",
    },
  ],
};

// ---------------------------------------------------------------------------------------------------
// The tests

const issues = (code: string, file = "x.test.ts"): string[] => findHygieneIssues(file, code).findings.map((f) => `${f.rule}: ${f.what}`);

describe("the hygiene check (synthetic sources)", () => {
  it("finds fixed sleeps in their usual forms", () => {
    for (const code of [
      "await new Promise((r) => setTimeout(r, 50));",
      "await new Promise((resolve) => setTimeout(resolve, 2_500));",
      "await new Promise<void>(function (done) { setTimeout(() => done(), 10); });",
      "peer.methods.x = () => new Promise((r) => setTimeout(() => r({ pid: 2 }), 100));",
      "await new Promise((r) => globalThis.setTimeout(r, 5));",
      'import { setTimeout as wait } from "node:timers/promises";',
      'import { scheduler } from "timers/promises";',
      'const { setTimeout: wait } = await import("node:timers/promises");',
      "await sleep(200);",
      "await delay(20);",
      "Atomics.wait(view, 0, 0, 100);",
    ]) {
      expect(issues(code), code).toEqual([expect.stringMatching(/^fixed-sleep: /)]);
    }
  });

  it("finds timer-paced steps", () => {
    expect(issues('const t = setInterval(() => conn.send({ method: "notifications/progress" }), 400);')).toEqual([
      expect.stringMatching(/^timer-paced: setInterval\(/),
    ]);
    expect(issues("await new Promise((r) => { const t = setInterval(() => { clearInterval(t); r(); }, 400); });").sort()).toEqual([
      expect.stringMatching(/^fixed-sleep: /),
      expect.stringMatching(/^timer-paced: /),
    ]);
  });

  it("finds focused and skipped tests", () => {
    for (const code of [
      'it.only("x", () => {});',
      'test.skip("x", () => {});',
      'describe.skip("x", () => {});',
      'describe.only("x", () => {});',
      'it.todo("x");',
      'it.concurrent.only("x", () => {});',
      'it.skip.each([1])("x %d", () => {});',
    ]) {
      expect(issues(code), code).toEqual([expect.stringMatching(/^focused-or-skipped: /)]);
    }
  });

  it("leaves bounds, real events, conditional skips and child scripts alone", () => {
    for (const code of [
      // A bound on a wait for an event.
      "await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000).unref())]);",
      'new Promise((res) => { const t = setTimeout(() => res(false), 30_000); child.once("exit", () => { clearTimeout(t); res(true); }); });',
      'new Promise((_, reject) => setTimeout(() => reject(new Error("no answer")), 20_000));',
      "new Promise((resolve) => (answer = resolve));",
      "await new Promise((r) => setImmediate(r));",
      // The clock of the code under test, run by hand.
      "vi.useFakeTimers(); vi.advanceTimersByTime(400);",
      // Conditional skips that say why, and a test's own skip.
      'it.skipIf(process.platform !== "linux")("x", () => {});',
      'describe.runIf(root)("x", () => {});',
      'it("x", ({ skip }) => { skip("no IPv6 loopback"); });',
      'it("x", (ctx) => { ctx.skip(); });',
      // Strings and comments are not code.
      'spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000); await new Promise((r) => setTimeout(r, 5))"]);',
      "// await new Promise((r) => setTimeout(r, 50)); it.only(",
      "const sleepers = await openClients(d, 3); obj.skip = true;",
    ]) {
      expect(issues(code), code).toEqual([]);
    }
  });

  it("reads JavaScript test helpers too", () => {
    expect(issues("await new Promise((r) => setTimeout(r, 1));", "h.mjs")).toHaveLength(1);
  });
});

describe("the test files", () => {
  const sources = loadTestSources();

  it("are all found: each package's test/ and tests/, without benchmarks, the soak run or fixtures", () => {
    const files = [...sources.keys()];
    for (const file of [
      "tests/test-hygiene.test.ts",
      "tests/helpers/process.ts",
      "client-sdk/test/jsonl-peer.ts",
      "protocol/test/sse.test.ts",
    ]) {
      expect(files).toContain(file);
    }
    expect(files.filter((f) => /^tests\/(bench|soak)\/|\/fixtures\//.test(f))).toEqual([]);
  });

  it("wait for events, not for fixed times, and none is focused or skipped (allowlist aside)", () => {
    const unexpected: string[] = [];
    const used = new Set<Allowed>();
    for (const [file, code] of sources) {
      const { findings, errors } = findHygieneIssues(file, code);
      expect(errors, file).toEqual([]);
      for (const f of findings) {
        const allowed = (ALLOWED[file] ?? []).find((a) => a.rule === f.rule && f.what.startsWith(a.what));
        if (allowed) used.add(allowed);
        else unexpected.push(`${file}:${f.line} ${f.rule}: ${f.what}`);
      }
    }
    expect(unexpected).toEqual([]);
    const stale = Object.entries(ALLOWED).flatMap(([file, list]) =>
      list.filter((a) => !used.has(a) && !a.transitional).map((a) => `${file}: ${a.what}`),
    );
    expect(stale, "allowlist entries that match nothing any more: remove them").toEqual([]);
  });
});
