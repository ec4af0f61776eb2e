/**
 * The layering test: reads every workspace package's package.json and every import in <pkg>/src and
 * fails when an arrow points the wrong way. Layers (docs/architecture.md):
 *
 *   protocol  <-  transports  <-  daemon
 *   protocol  <-  client-sdk  <-  daemon   (the daemon's CLI uses the client SDK)
 *
 * Inside a package, some folders may not import others ({@link FOLDERS}): the router knows the servers
 * only through its ports.
 *
 * The check itself is a pure function over file contents and manifests, so the same test proves it
 * fails on synthetic bad trees before it passes on the real one.
 */
import { builtinModules } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findImports, loadWorkspace, type Manifest } from "./helpers/workspace-sources.js";

export type { Manifest };

// ---------------------------------------------------------------------------------------------------
// The rules

interface LayerRule {
  /** Workspace packages this one may import. */
  mayImport: readonly string[];
  /** false: no `node:*` or bare built-in modules, and no Node-only globals (`process`, `Buffer`, ...). */
  nodeAllowed: boolean;
  /** When set, the only npm packages (non-workspace) this package may import. */
  npmAllowList?: readonly string[];
  /**
   * Workspace packages this one may import only through the given entries (not their index): what every
   * process loading it pays for at start-up.
   */
  leanEntries?: Readonly<Record<string, readonly string[]>>;
}

/** Keyed by package name. A workspace package without a rule is itself a violation. */
export const LAYERS: Readonly<Record<string, LayerRule>> = {
  "@mcpd/protocol": { mayImport: [], nodeAllowed: false, npmAllowList: [] },
  "@mcpd/transports": { mayImport: ["@mcpd/protocol"], nodeAllowed: true },
  // Every `mcpd status` and agent using the client loads it: never the protocol's SSE codec.
  "@mcpd/client": {
    mayImport: ["@mcpd/protocol"],
    nodeAllowed: true,
    leanEntries: { "@mcpd/protocol": ["@mcpd/protocol/core", "@mcpd/protocol/peer"] },
  },
  "@mcpd/daemon": { mayImport: ["@mcpd/protocol", "@mcpd/transports", "@mcpd/client"], nodeAllowed: true },
  "@mcpd/tests": { mayImport: ["@mcpd/protocol", "@mcpd/transports", "@mcpd/client", "@mcpd/daemon"], nodeAllowed: true },
};

/**
 * Folders of a package (root-relative, with a trailing `/`) that may not import the listed folders of the
 * same package, by any relative import (`import type` and `import()` types included), and why.
 */
export const FOLDERS: Readonly<Record<string, { mayNotImport: readonly string[]; why: string }>> = {
  "daemon/src/router/": {
    mayNotImport: ["daemon/src/supervision/", "daemon/src/socket/", "daemon/src/http/", "daemon/src/cli/"],
    why: "the router knows the servers only through its ports (router/upstream-port.ts), and the faces and the CLI sit above it",
  },
};

/** npm packages only some layers may use (the config file, and so its JSONC parser, is the daemon's alone). */
const NPM_ONLY_IN: Readonly<Record<string, readonly string[]>> = { "jsonc-parser": ["@mcpd/daemon"] };

const WORKSPACE_SCOPE = "@mcpd/";
const BUILTINS = new Set(builtinModules);

// ---------------------------------------------------------------------------------------------------
// The pure check

export interface Violation {
  package: string;
  /** The source file or package.json, relative to the root. */
  file: string;
  rule:
    | "no-rule"
    | "parse-error"
    | "layer-direction"
    | "folder-direction"
    | "manifest-direction"
    | "self-import"
    | "unknown-workspace-package"
    | "deep-import"
    | "relative-escape"
    | "absolute-import"
    | "computed-specifier"
    | "node-builtin"
    | "node-global"
    | "npm-not-allowed"
    | "heavy-entry"
    | "undeclared-dependency";
  specifier?: string;
  message: string;
}

/** `@scope/name/sub` -> `@scope/name`; `name/sub` -> `name`. */
function packageNameOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

/** The entry points a package's `exports` declares (`.`, `./core`), besides its manifest. */
function publicEntries(manifest: Manifest): string[] {
  return Object.keys(manifest.exports ?? {}).filter((k) => k !== "./package.json");
}

function isBuiltin(specifier: string): boolean {
  return specifier.startsWith("node:") || BUILTINS.has(specifier) || BUILTINS.has(packageNameOf(specifier));
}

/** What checking one package's sources needs. */
interface PackageCheck {
  manifest: Manifest;
  rule: LayerRule;
  manifests: readonly Manifest[];
  byName: ReadonlyMap<string, Manifest>;
  /** Its runtime dependencies; with its dev dependencies, for imports of types only. */
  declared: ReadonlySet<string>;
  declaredForTypes: ReadonlySet<string>;
}

/** Records one violation of the file being checked. */
type Add = (v: Omit<Violation, "package" | "file">) => void;

/**
 * Checks a whole workspace. `files` maps root-relative posix paths (`transports/src/x.ts`) to source
 * text; only files under a package's `src/` are read. Returns every violation, in a stable order.
 */
export function checkLayering(manifests: readonly Manifest[], files: ReadonlyMap<string, string>): Violation[] {
  const out: Violation[] = [];
  const byName = new Map(manifests.map((m) => [m.name, m]));
  for (const manifest of manifests) {
    const rule = LAYERS[manifest.name];
    const pkg = manifest.name;
    const manifestFile = `${manifest.dir}/package.json`;
    if (!rule) {
      out.push({
        package: pkg,
        file: manifestFile,
        rule: "no-rule",
        message: `${pkg} has no layering rule: add it to LAYERS in tests/layering.test.ts`,
      });
      continue;
    }
    const runtime = { ...manifest.peerDependencies, ...manifest.optionalDependencies, ...manifest.dependencies };
    const declared = new Set(Object.keys(runtime));
    const declaredForTypes = new Set([...declared, ...Object.keys(manifest.devDependencies ?? {})]);
    for (const dep of Object.keys(runtime)) {
      if (dep.startsWith(WORKSPACE_SCOPE) && dep !== pkg && !rule.mayImport.includes(dep)) {
        out.push({
          package: pkg,
          file: manifestFile,
          rule: "manifest-direction",
          specifier: dep,
          message: `${pkg} declares ${dep}, which it may not depend on (allowed: ${rule.mayImport.join(", ") || "none"})`,
        });
      }
    }
    const check: PackageCheck = { manifest, rule, manifests, byName, declared, declaredForTypes };
    const srcDir = `${manifest.dir}/src/`;
    const sources = [...files.keys()].filter((f) => f.startsWith(srcDir) && /\.(m|c)?tsx?$/.test(f)).sort();
    for (const file of sources) checkSource(check, file, files.get(file) ?? "", (v) => out.push({ package: pkg, file, ...v }));
  }
  return out;
}

/** One source file of a package: it parses, uses no Node global it may not, and imports only what it may. */
function checkSource(check: PackageCheck, file: string, code: string, add: Add): void {
  const pkg = check.manifest.name;
  const found = findImports(file, code);
  for (const error of found.errors) add({ rule: "parse-error", message: `${file} does not parse: ${error}` });
  if (!check.rule.nodeAllowed) {
    for (const name of new Set(found.nodeGlobals)) {
      add({ rule: "node-global", specifier: name, message: `${pkg} uses the Node-only global ${name}; this layer has no Node I/O` });
    }
  }
  for (const ref of found.imports) {
    const spec = ref.specifier;
    if (spec === null) {
      add({
        rule: "computed-specifier",
        message: `${ref.kind} with a computed specifier in ${file}: its layer cannot be checked; use a string literal`,
      });
    } else if (spec.startsWith(".")) checkRelative(check, file, spec, add);
    else if (spec.startsWith("/") || spec.startsWith("file:")) {
      add({ rule: "absolute-import", specifier: spec, message: `${file} imports the absolute path "${spec}"` });
    } else if (isBuiltin(spec)) {
      if (!check.rule.nodeAllowed)
        add({ rule: "node-builtin", specifier: spec, message: `${pkg} imports the Node built-in "${spec}"; this layer has no Node I/O` });
    } else checkPackageImport(check, file, spec, ref.typeOnly, add);
  }
}

/** A relative import: it stays in the package's `src/`, and in the folders its folder may import ({@link FOLDERS}). */
function checkRelative(check: PackageCheck, file: string, spec: string, add: Add): void {
  const srcDir = `${check.manifest.dir}/src/`;
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
  if (!target.startsWith(srcDir)) {
    const other = check.manifests.find((m) => target.startsWith(`${m.dir}/`));
    add({
      rule: "relative-escape",
      specifier: spec,
      message:
        other && other !== check.manifest
          ? `${file} reaches into ${other.name}'s files through "${spec}": import "${other.name}" instead`
          : `${file} imports "${spec}", which leaves ${srcDir}`,
    });
  }
  const folder = Object.keys(FOLDERS).find((f) => file.startsWith(f));
  const barred = folder === undefined ? undefined : FOLDERS[folder]?.mayNotImport.find((f) => target.startsWith(f));
  if (folder !== undefined && barred !== undefined)
    add({
      rule: "folder-direction",
      specifier: spec,
      message: `${file} imports ${barred}: no file in ${folder} may (${FOLDERS[folder]?.why})`,
    });
}

/** An import of a package by name: a workspace package in the layer's direction, or an npm package it may use and declares. */
function checkPackageImport(check: PackageCheck, file: string, spec: string, typeOnly: boolean, add: Add): void {
  const { rule } = check;
  const pkg = check.manifest.name;
  const name = packageNameOf(spec);
  if (name.startsWith(WORKSPACE_SCOPE)) {
    if (name === pkg) {
      add({ rule: "self-import", specifier: spec, message: `${file} imports its own package "${spec}" by name: use a relative path` });
      return;
    }
    const target = check.byName.get(name);
    if (!target) {
      add({ rule: "unknown-workspace-package", specifier: spec, message: `${file} imports "${spec}", which is no workspace package` });
      return;
    }
    if (spec !== name && !publicEntries(target).includes(`.${spec.slice(name.length)}`)) {
      add({
        rule: "deep-import",
        specifier: spec,
        message: `${file} imports "${spec}", an internal of ${name}: import from "${name}" or an entry its package.json exports only`,
      });
    }
    const lean = rule.leanEntries?.[name];
    if (lean && !lean.includes(spec)) {
      add({
        rule: "heavy-entry",
        specifier: spec,
        message: `${file} imports "${spec}": ${pkg} imports ${name} only through ${lean.join(", ")}`,
      });
    }
    if (!rule.mayImport.includes(name)) {
      add({
        rule: "layer-direction",
        specifier: spec,
        message: `${pkg} may not import ${name} (allowed: ${rule.mayImport.join(", ") || "none"})`,
      });
    }
  } else {
    if (rule.npmAllowList && !rule.npmAllowList.includes(name)) {
      add({
        rule: "npm-not-allowed",
        specifier: spec,
        message: `${pkg} may import no npm package but ${rule.npmAllowList.join(", ")}; found "${spec}"`,
      });
    }
    const onlyIn = NPM_ONLY_IN[name];
    if (onlyIn && !onlyIn.includes(pkg)) {
      add({ rule: "npm-not-allowed", specifier: spec, message: `only ${onlyIn.join(", ")} may import ${name}; found in ${file}` });
    }
  }
  if (!(typeOnly ? check.declaredForTypes : check.declared).has(name)) {
    add({
      rule: "undeclared-dependency",
      specifier: spec,
      message: `${file} imports "${spec}" but ${check.manifest.dir}/package.json does not declare ${name} in dependencies`,
    });
  }
}

// ---------------------------------------------------------------------------------------------------
// Tests

const GOOD_MANIFESTS: Manifest[] = [
  {
    dir: "protocol",
    name: "@mcpd/protocol",
    dependencies: {},
    exports: { ".": "./dist/index.js", "./core": "./dist/core.js", "./peer": "./dist/peer/index.js", "./package.json": "./package.json" },
  },
  { dir: "transports", name: "@mcpd/transports", dependencies: { "@mcpd/protocol": "0.1.0", undici: "7.30.2", ws: "8.23.0" } },
  { dir: "client-sdk", name: "@mcpd/client", dependencies: { "@mcpd/protocol": "0.1.0" } },
  {
    dir: "daemon",
    name: "@mcpd/daemon",
    dependencies: { "@mcpd/protocol": "0.1.0", "@mcpd/transports": "0.1.0", "@mcpd/client": "0.1.0", "jsonc-parser": "3.3.1" },
  },
];

const GOOD_FILES: Record<string, string> = {
  "protocol/src/index.ts": `export * from "./types.js";\n/** Example: import { x } from "@mcpd/daemon"; require("fs") */\nconst s = "import fs from 'node:fs'";\nconst o = { process: 1, Buffer: 2 };\nexport const p = o.process;\n`,
  "protocol/src/types.ts": `export interface Job { process(): void; Buffer: string }\nexport type T = import("./index.js").Job;\n`,
  "transports/src/stdio-transport.ts": `import { spawn } from "node:child_process";\nimport { readFile } from "fs/promises";\nimport type { JsonObject } from "@mcpd/protocol";\nimport { WebSocket } from "ws";\nimport { fetch } from "undici";\nimport { x } from "./sub/y.js";\nexport const b = Buffer.alloc(1);\n`,
  "transports/src/sub/y.ts": `export const x = await import("../stdio-transport.js");\n`,
  "client-sdk/src/index.ts": `import os from "node:os";\nexport { isRequest } from "@mcpd/protocol/core";\nexport { JsonRpcPeer } from "@mcpd/protocol/peer";\n`,
  "daemon/src/cli/main.ts": `import { createTransport } from "@mcpd/transports";\nimport { resolvePaths } from "@mcpd/client";\nimport { visit } from "jsonc-parser";\nconst m = require("@mcpd/protocol");\n`,
  "daemon/test/x.test.ts": `import "../../transports/src/anything.js"; // tests are not checked\n`,
};

function run(overrides: Record<string, string> = {}, manifests: Manifest[] = GOOD_MANIFESTS): Violation[] {
  return checkLayering(manifests, new Map(Object.entries({ ...GOOD_FILES, ...overrides })));
}

function withDeps(name: string, deps: Record<string, string>): Manifest[] {
  return GOOD_MANIFESTS.map((m) => (m.name === name ? { ...m, dependencies: deps } : m));
}

describe("layering check on synthetic trees", () => {
  it("accepts a well-layered tree (comments, strings and property names that look like imports or Node globals are ignored)", () => {
    expect(run()).toEqual([]);
  });

  it.each<[string, Record<string, string>, Violation["rule"], string]>([
    [
      "protocol imports node:child_process",
      { "protocol/src/bad.ts": `import { spawn } from "node:child_process";` },
      "node-builtin",
      "node:child_process",
    ],
    ["protocol imports bare fs", { "protocol/src/bad.ts": `import { readFileSync } from "fs";` }, "node-builtin", "fs"],
    ["protocol imports fs/promises", { "protocol/src/bad.ts": `export { readFile } from "fs/promises";` }, "node-builtin", "fs/promises"],
    ["protocol imports net dynamically", { "protocol/src/bad.ts": `export const n = await import("net");` }, "node-builtin", "net"],
    ["protocol requires http", { "protocol/src/bad.ts": `const h = require("http");` }, "node-builtin", "http"],
    [
      "protocol type-imports node:stream",
      { "protocol/src/bad.ts": `import type { Readable } from "node:stream";` },
      "node-builtin",
      "node:stream",
    ],
    ["protocol imports an npm package", { "protocol/src/bad.ts": `import { fetch } from "undici";` }, "npm-not-allowed", "undici"],
    ["protocol uses process", { "protocol/src/bad.ts": `export const env = process.env.HOME;` }, "node-global", "process"],
    ["protocol uses Buffer", { "protocol/src/bad.ts": `export const b = Buffer.from("x");` }, "node-global", "Buffer"],
    ["protocol names a NodeJS type", { "protocol/src/bad.ts": `export let t: NodeJS.Timeout | undefined;` }, "node-global", "NodeJS"],
    [
      "protocol imports transports",
      { "protocol/src/bad.ts": `import { StdioTransport } from "@mcpd/transports";` },
      "layer-direction",
      "@mcpd/transports",
    ],
    [
      "transports imports the daemon",
      { "transports/src/bad.ts": `import { Manager } from "@mcpd/daemon";` },
      "layer-direction",
      "@mcpd/daemon",
    ],
    [
      "transports re-exports from the daemon",
      { "transports/src/bad.ts": `export * from "@mcpd/daemon";` },
      "layer-direction",
      "@mcpd/daemon",
    ],
    [
      "transports type-imports the daemon",
      { "transports/src/bad.ts": `import type { Manager } from "@mcpd/daemon";` },
      "layer-direction",
      "@mcpd/daemon",
    ],
    [
      "transports names a daemon type through import()",
      { "transports/src/bad.ts": `export type M = import("@mcpd/daemon").Manager;` },
      "layer-direction",
      "@mcpd/daemon",
    ],
    [
      "transports imports the client SDK (sideways)",
      { "transports/src/bad.ts": `import { McpdClient } from "@mcpd/client";` },
      "layer-direction",
      "@mcpd/client",
    ],
    [
      "client-sdk imports transports (sideways)",
      { "client-sdk/src/bad.ts": `import { createTransport } from "@mcpd/transports";` },
      "layer-direction",
      "@mcpd/transports",
    ],
    [
      "client-sdk requires the daemon",
      { "client-sdk/src/bad.ts": `const d = require("@mcpd/daemon");` },
      "layer-direction",
      "@mcpd/daemon",
    ],
    [
      "a deep import into dist",
      { "transports/src/bad.ts": `import { x } from "@mcpd/protocol/dist/x.js";` },
      "deep-import",
      "@mcpd/protocol/dist/x.js",
    ],
    [
      "a deep import into src",
      { "daemon/src/bad.ts": `import { x } from "@mcpd/transports/src/stdio-transport.js";` },
      "deep-import",
      "@mcpd/transports/src/stdio-transport.js",
    ],
    [
      "a relative path into another package",
      { "daemon/src/bad.ts": `import { StdioTransport } from "../../transports/src/stdio-transport.js";` },
      "relative-escape",
      "../../transports/src/stdio-transport.js",
    ],
    [
      "a relative path out of src",
      { "daemon/src/router/bad.ts": `import pkg from "../../package.json";` },
      "relative-escape",
      "../../package.json",
    ],
    [
      "an absolute path",
      { "daemon/src/bad.ts": `import x from "/work/main/protocol/src/index.js";` },
      "absolute-import",
      "/work/main/protocol/src/index.js",
    ],
    ["an unknown workspace package", { "daemon/src/bad.ts": `import x from "@mcpd/nope";` }, "unknown-workspace-package", "@mcpd/nope"],
    [
      "a package importing itself by name",
      { "transports/src/bad.ts": `import x from "@mcpd/transports";` },
      "self-import",
      "@mcpd/transports",
    ],
    ["an undeclared npm package", { "client-sdk/src/bad.ts": `import PQueue from "p-queue";` }, "undeclared-dependency", "p-queue"],
    [
      "jsonc-parser below the daemon",
      { "transports/src/bad.ts": `import { visit } from "jsonc-parser";` },
      "npm-not-allowed",
      "jsonc-parser",
    ],
  ])("fails when %s", (_title, files, rule, specifier) => {
    const violations = run(files);
    expect(violations.length).toBeGreaterThan(0);
    expect(violations).toContainEqual(expect.objectContaining({ rule, specifier }));
    // Every violation names the offending file and says what is wrong.
    for (const v of violations) {
      expect(Object.keys(files)).toContain(v.file);
      expect(v.message.length).toBeGreaterThan(10);
    }
  });

  it("fails on a computed import specifier", () => {
    expect(run({ "protocol/src/bad.ts": "const name = 'fs';\nexport const m = await import(name);" })).toContainEqual(
      expect.objectContaining({ rule: "computed-specifier", file: "protocol/src/bad.ts" }),
    );
  });

  it("fails on a source file that does not parse", () => {
    expect(run({ "client-sdk/src/bad.ts": "import { from 'x';" })).toContainEqual(expect.objectContaining({ rule: "parse-error" }));
  });

  it("fails when a package imports a workspace package its package.json does not declare", () => {
    const violations = run({}, withDeps("@mcpd/transports", { undici: "7.30.2", ws: "8.23.0" }));
    expect(violations).toContainEqual(
      expect.objectContaining({ rule: "undeclared-dependency", file: "transports/src/stdio-transport.ts", specifier: "@mcpd/protocol" }),
    );
  });

  it("fails when a package.json declares a dependency against the direction", () => {
    const violations = run({}, withDeps("@mcpd/client", { "@mcpd/protocol": "0.1.0", "@mcpd/daemon": "0.1.0" }));
    expect(violations).toEqual([
      expect.objectContaining({ rule: "manifest-direction", file: "client-sdk/package.json", specifier: "@mcpd/daemon" }),
    ]);
  });

  it("fails on a workspace package without a rule", () => {
    const violations = run({}, [...GOOD_MANIFESTS, { dir: "bench", name: "@mcpd/bench" }]);
    expect(violations).toEqual([expect.objectContaining({ rule: "no-rule", package: "@mcpd/bench" })]);
  });

  it("accepts an import of an entry point the package exports, and refuses its package.json", () => {
    expect(run({ "client-sdk/src/socket-trust.ts": `import { UntrustedSocketError } from "@mcpd/protocol/core";` })).toEqual([]);
    expect(run({ "client-sdk/src/bad.ts": `import m from "@mcpd/protocol/package.json";` })).toContainEqual(
      expect.objectContaining({ rule: "deep-import", specifier: "@mcpd/protocol/package.json" }),
    );
  });

  it("fails when the client SDK imports the protocol's index instead of its lean entries", () => {
    expect(run({ "client-sdk/src/bad.ts": `import { SseReader } from "@mcpd/protocol";` })).toEqual([
      expect.objectContaining({ rule: "heavy-entry", file: "client-sdk/src/bad.ts", specifier: "@mcpd/protocol" }),
    ]);
    expect(run({ "client-sdk/src/types.ts": `import type { JsonObject } from "@mcpd/protocol";` })).toContainEqual(
      expect.objectContaining({ rule: "heavy-entry", specifier: "@mcpd/protocol" }),
    );
  });

  it.each([
    ["supervision", `import { MCPManager } from "../supervision/manager.js";`],
    ["supervision, for a type", `import type { ServerHandle } from "../supervision/server-handle.js";`],
    ["supervision, through import()", `export type H = import("../supervision/server-handle.js").ServerHandle;`],
    ["the socket face", `export { SocketServer } from "../socket/socket-server.js";`],
    ["the HTTP face", `import type { HttpFront } from "../http/http-front.js";`],
    ["the CLI", `import "../cli/main.js";`],
  ])("fails when a router file imports %s", (_title, code) => {
    expect(run({ "daemon/src/router/bad.ts": code })).toEqual([
      expect.objectContaining({ rule: "folder-direction", file: "daemon/src/router/bad.ts" }),
    ]);
  });

  it("accepts a router file importing its ports, the config and the protocol, and the composition importing the router's ports", () => {
    expect(
      run({
        "daemon/src/router/ok.ts": `import type { Upstream } from "./upstream-port.js";
import type { ResolvedServerConfig } from "../config/config-schema.js";
import type { JsonObject } from "@mcpd/protocol";
`,
        "daemon/src/composition/manager-directory.ts": `import type { ServerDirectory } from "../router/upstream-port.js";
`,
      }),
    ).toEqual([]);
  });

  it("accepts the daemon's declared dependency on the client SDK", () => {
    expect(run({ "daemon/src/socket-server.ts": `import { checkSocketPath } from "@mcpd/client";` })).toEqual([]);
  });
});

describe("layering of the real tree", () => {
  const { manifests, files } = loadWorkspace();

  it("reads every workspace package and its sources", () => {
    expect(manifests.map((m) => m.name).sort()).toEqual([
      "@mcpd/client",
      "@mcpd/daemon",
      "@mcpd/protocol",
      "@mcpd/tests",
      "@mcpd/transports",
    ]);
    for (const dir of ["protocol", "transports", "daemon", "client-sdk"]) {
      expect(
        [...files.keys()].some((f) => f.startsWith(`${dir}/src/`)),
        dir,
      ).toBe(true);
    }
    // The reader finds real imports (guards against a check that silently sees nothing).
    expect(findImports("protocol/src/core.ts", files.get("protocol/src/core.ts") ?? "").imports.length).toBeGreaterThan(3);
  });

  it("has no layering violations", () => {
    const violations = checkLayering(manifests, files);
    expect(violations.map((v) => `${v.file}: [${v.rule}] ${v.message}`)).toEqual([]);
  });
});
