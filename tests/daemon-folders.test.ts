/**
 * The daemon's folders in layers (docs/architecture.md, "The folders of daemon/src"): a file may import
 * from its own folder and from folders of a lower layer, never from one above it nor from a sibling
 * of its own layer (the two faces never reach into each other). Only the foundation layer (config,
 * secrets, infra, lifecycle) may import across itself. The check is a pure function over file contents,
 * proved to fail on synthetic bad trees before it passes on the real one.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, findImports, loadWorkspace } from "./helpers/workspace-sources.js";

/** Each folder of daemon/src (or top-level file) and its layer: higher layers may import lower ones. */
export const DAEMON_LAYERS: Readonly<Record<string, number>> = {
  "defaults-http.ts": 0,
  "defaults.ts": 1,
  "version.ts": 1,
  config: 1,
  secrets: 1,
  infra: 1,
  lifecycle: 1,
  "config-import": 2,
  service: 2,
  supervision: 3,
  auth: 4,
  router: 4,
  control: 5,
  metrics: 5,
  telemetry: 5,
  socket: 6,
  http: 6,
  composition: 7,
  "daemon.ts": 8,
  cli: 9,
  // The package's public face re-exports from anywhere, `mcpd connect`'s bridge among it.
  "index.ts": 10,
};
/** The one layer whose folders may import one another. */
const FOUNDATION = 1;

/** The layer unit a daemon/src-relative path belongs to: its first folder, or the file itself at the top. */
function unitOf(rel: string): string {
  const first = rel.split("/")[0] as string;
  return rel.includes("/") ? first : first.replace(/\.js$/, ".ts");
}

/** Every import of `files` (root-relative paths under daemon/src) that points at a layer it may not use. */
export function folderViolations(files: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [file, code] of files) {
    if (!file.startsWith("daemon/src/")) continue;
    const from = unitOf(file.slice("daemon/src/".length));
    const fromLayer = DAEMON_LAYERS[from];
    if (fromLayer === undefined) {
      out.push(`${file}: "${from}" has no layer in DAEMON_LAYERS`);
      continue;
    }
    for (const ref of findImports(file, code).imports) {
      const spec = ref.specifier;
      if (spec === null || !spec.startsWith(".")) continue;
      const target = path.posix.relative("daemon/src", path.posix.join(path.posix.dirname(file), spec));
      if (target.startsWith("..")) continue;
      const to = unitOf(target);
      if (to === from) continue;
      const toLayer = DAEMON_LAYERS[to];
      if (toLayer === undefined) out.push(`${file} imports ${spec}: "${to}" has no layer in DAEMON_LAYERS`);
      else if (toLayer > fromLayer)
        out.push(`${file} imports ${spec}: ${from} (layer ${fromLayer}) reaches up into ${to} (layer ${toLayer})`);
      else if (toLayer === fromLayer && fromLayer !== FOUNDATION) out.push(`${file} imports ${spec}: ${from} reaches sideways into ${to}`);
    }
  }
  return out;
}

describe("the daemon's folders in layers", () => {
  it.each<[string, Record<string, string>, string]>([
    [
      "a socket file importing the CLI",
      { "daemon/src/socket/bridge.ts": `import { X } from "../cli/cli-defaults.js";` },
      "reaches up into cli",
    ],
    [
      "the router importing a face",
      { "daemon/src/router/r.ts": `import type { S } from "../http/http-sessions.js";` },
      "reaches up into http",
    ],
    [
      "one face importing the other",
      { "daemon/src/http/h.ts": `import { Y } from "../socket/socket-path.js";` },
      "reaches sideways into socket",
    ],
    [
      "supervision importing the composition",
      { "daemon/src/supervision/m.ts": `import { startDaemon } from "../daemon.js";` },
      "reaches up into daemon.ts",
    ],
    ["a folder with no layer", { "daemon/src/newfolder/n.ts": `export const n = 1;` }, "has no layer"],
  ])("fails on %s", (_what, files, expected) => {
    expect(folderViolations(new Map(Object.entries(files))).join("\n")).toContain(expected);
  });

  it("passes what the layers allow: down, within a folder, and across the foundation", () => {
    const files = new Map(
      Object.entries({
        "daemon/src/http/h.ts": `import { R } from "../router/router.js"; import { D } from "../defaults.js"; import { H } from "./http-guard.js";`,
        "daemon/src/secrets/s.ts": `import type { C } from "../config/config-schema.js";`,
      }),
    );
    expect(folderViolations(files)).toEqual([]);
  });

  it("holds on the daemon's source", () => {
    expect(folderViolations(loadWorkspace().files)).toEqual([]);
  });
});

describe("the daemon's tests mirror its source folders", () => {
  it("every daemon/test/**/*.test.ts sits in the folder of the daemon/src folder it tests", () => {
    const folders = new Set(Object.keys(DAEMON_LAYERS).filter((unit) => !unit.endsWith(".ts")));
    const misplaced = readdirSync(path.join(ROOT, "daemon/test"), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".test.ts"))
      .map((f) => f.split(path.sep).join("/"))
      .filter((f) => !f.includes("/") || !folders.has(f.split("/")[0] as string));
    expect(misplaced).toEqual([]);
  });
});
