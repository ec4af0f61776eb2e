/**
 * No import cycle inside any package: layering.test.ts keeps the arrows between packages pointing one
 * way; this test does the same for the files inside each package's src/. Every relative reference
 * counts, `import type` and `export ... from` included: a type-only loop is still a loop for whoever
 * reads the code (neither file can be understood first).
 *
 * The check is a pure function over file contents, so it is shown to find cycles in synthetic trees
 * before it passes on the real one.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findImports, loadWorkspace } from "./helpers/workspace-sources.js";

const SOURCE = /\.(m|c)?tsx?$/;

/** The source file a relative specifier names (`./x.js` -> `x.ts`, `./dir` -> `dir/index.ts`), if it is one of `files`. */
function resolveRelative(from: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const candidates = [
    target,
    target.replace(/\.js$/, ".ts"),
    target.replace(/\.js$/, ".tsx"),
    target.replace(/\.mjs$/, ".mts"),
    target.replace(/\.cjs$/, ".cts"),
    `${target}.ts`,
    `${target}/index.ts`,
  ];
  return candidates.find((c) => files.has(c));
}

/** file -> the files it references through relative specifiers (only `<pkg>/src/` source files). */
export function importGraph(files: ReadonlyMap<string, string>): Map<string, Set<string>> {
  const sources = new Set([...files.keys()].filter((f) => /^[^/]+\/src\//.test(f) && SOURCE.test(f)));
  const graph = new Map<string, Set<string>>();
  for (const file of [...sources].sort()) {
    const edges = new Set<string>();
    for (const ref of findImports(file, files.get(file) ?? "").imports) {
      if (ref.specifier === null || !ref.specifier.startsWith(".")) continue;
      const target = resolveRelative(file, ref.specifier, sources);
      if (target !== undefined) edges.add(target);
    }
    graph.set(file, edges);
  }
  return graph;
}

/** A set of files that all reach each other through imports, and one loop among them. */
export interface Tangle {
  /** Every file of the tangle (a strongly connected component of the graph), sorted. */
  files: string[];
  /** One shortest loop through the first of `files`: `[a, b, a]`; a file importing itself is `[a, a]`. */
  loop: string[];
}

/** Every import cycle, as the tangles of the graph (Tarjan's strongly connected components), sorted. */
export function findCycles(graph: ReadonlyMap<string, ReadonlySet<string>>): Tangle[] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const strongConnect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        strongConnect(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      components.push(component);
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) strongConnect(v);

  const tangles: Tangle[] = [];
  for (const component of components) {
    const members = new Set(component);
    const files = [...component].sort();
    const start = files[0] as string;
    if (component.length === 1 && !graph.get(start)?.has(start)) continue;
    // Shortest loop from `start` back to itself inside the component (breadth first).
    const previous = new Map<string, string>();
    const queue = [start];
    let last: string | undefined;
    while (queue.length > 0 && last === undefined) {
      const v = queue.shift() as string;
      for (const w of [...(graph.get(v) ?? [])].sort()) {
        if (!members.has(w)) continue;
        if (w === start) {
          last = v;
          break;
        }
        if (!previous.has(w)) {
          previous.set(w, v);
          queue.push(w);
        }
      }
    }
    const loop = [start];
    for (let v = last as string; v !== start; v = previous.get(v) as string) loop.splice(1, 0, v);
    loop.push(start);
    tangles.push({ files, loop });
  }
  return tangles.sort((a, b) => (a.files[0] as string).localeCompare(b.files[0] as string));
}

function cyclesIn(files: Record<string, string>): Tangle[] {
  return findCycles(importGraph(new Map(Object.entries(files))));
}

/** A tangle as the failure message shows it. */
function describeTangle(t: Tangle): string {
  return `${t.files.join(", ")} import each other (${t.loop.join(" -> ")})`;
}

describe("import cycle check on synthetic trees", () => {
  it("accepts a tree without loops (a diamond, imports of other packages and of non-source files)", () => {
    expect(
      cyclesIn({
        "pkg/src/index.ts": `export * from "./a.js";\nexport { b } from "./b.js";`,
        "pkg/src/a.ts": `import { c } from "./c.js";\nimport { x } from "@mcpd/protocol";\nexport const a = c;`,
        "pkg/src/b.ts": `import { c } from "./c.js";\nimport data from "./data.json";\nexport const b = c;`,
        "pkg/src/c.ts": `// import { a } from "./a.js";\nconst s = 'import { b } from "./b.js"';\nexport const c = 1;`,
        "pkg/test/a.test.ts": `import { a } from "../src/a.js";`,
      }),
    ).toEqual([]);
  });

  it.each<[string, Record<string, string>, string[]]>([
    [
      "two files import each other",
      { "pkg/src/a.ts": `import { b } from "./b.js";`, "pkg/src/b.ts": `import { a } from "./a.js";` },
      ["pkg/src/a.ts", "pkg/src/b.ts", "pkg/src/a.ts"],
    ],
    [
      "the loop is type-only on one side",
      {
        "pkg/src/session.ts": `import type { Router } from "./router.js";`,
        "pkg/src/router.ts": `import { Session } from "./session.js";`,
      },
      ["pkg/src/router.ts", "pkg/src/session.ts", "pkg/src/router.ts"],
    ],
    [
      "three files in a ring across folders, through export-from and a dynamic import",
      {
        "pkg/src/a.ts": `export { b } from "./sub/b.js";`,
        "pkg/src/sub/b.ts": `export const c = await import("../c.js");`,
        "pkg/src/c.ts": `export type A = import("./a.js").A;`,
      },
      ["pkg/src/a.ts", "pkg/src/sub/b.ts", "pkg/src/c.ts", "pkg/src/a.ts"],
    ],
    ["a file imports itself", { "pkg/src/a.ts": `import { a } from "./a.js";` }, ["pkg/src/a.ts", "pkg/src/a.ts"]],
    [
      "a folder's index imports back a file that imports the folder",
      { "pkg/src/x/index.ts": `import { a } from "../a.js";`, "pkg/src/a.ts": `import { x } from "./x";` },
      ["pkg/src/a.ts", "pkg/src/x/index.ts", "pkg/src/a.ts"],
    ],
  ])("finds a cycle when %s", (_title, files, loop) => {
    expect(cyclesIn(files)).toEqual([{ files: [...new Set(loop)].sort(), loop }]);
  });

  it("names every file of each tangle, and one shortest loop in it", () => {
    const cycles = cyclesIn({
      "p/src/a.ts": `import "./b.js";\nimport "./c.js";`,
      "p/src/b.ts": `import "./c.js";`,
      "p/src/c.ts": `import "./a.js";`,
      "q/src/x.ts": `import "./y.js";`,
      "q/src/y.ts": `import "./x.js";`,
    });
    expect(cycles).toEqual([
      { files: ["p/src/a.ts", "p/src/b.ts", "p/src/c.ts"], loop: ["p/src/a.ts", "p/src/c.ts", "p/src/a.ts"] },
      { files: ["q/src/x.ts", "q/src/y.ts"], loop: ["q/src/x.ts", "q/src/y.ts", "q/src/x.ts"] },
    ]);
    expect(describeTangle(cycles[1] as Tangle)).toBe("q/src/x.ts, q/src/y.ts import each other (q/src/x.ts -> q/src/y.ts -> q/src/x.ts)");
  });
});

describe("import cycles in the real tree", () => {
  const { files } = loadWorkspace();
  const graph = importGraph(files);

  it("reads the real import graph (guards against a check that silently sees nothing)", () => {
    expect(graph.get("daemon/src/daemon.ts")?.size ?? 0).toBeGreaterThan(3);
    for (const dir of ["protocol", "transports", "daemon", "client-sdk"]) {
      expect(
        [...graph.keys()].some((f) => f.startsWith(`${dir}/src/`)),
        dir,
      ).toBe(true);
    }
  });

  it("has no import cycle inside any package", () => {
    expect(findCycles(graph).map(describeTangle)).toEqual([]);
  });
});
