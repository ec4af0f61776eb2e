/**
 * Bundles the `mcpd` command into dist/cli-bundle/, which bin/mcpd.js runs: dist/cli/main.js and every
 * module of mcpd's it reaches (the other @mcpd packages included), as one entry file, one file per
 * lazily loaded command and a few shared chunks, as CommonJS (`.cjs`). npm packages (undici, ws, ...) and
 * Node's own modules stay require()s, loaded from node_modules as before.
 *
 * Why: `mcpd connect` is spawned by every agent session, so its start-up is paid again and again. Loaded
 * as the compiler writes it, it reads, resolves and compiles about 23 ES modules; bundled, about 7 files.
 * That is several ms of a ~85 ms start (docs/benchmarks.md, section 4), and CommonJS several more. The library entry points
 * (`@mcpd/daemon`, `@mcpd/client`, ...) stay the compiler's dist/ files: only the command is bundled.
 *
 * Also writes dist/cli-bundle/modules.json: for each output file, the compiled modules it holds (paths
 * relative to the repository root), so a test can still tell which of mcpd's modules a process loaded.
 *
 * Run after `tsc -b` (it reads dist/): `npm run build` runs both. Usage: node daemon/scripts/bundle-cli.mjs
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";
import { dependencyFaults } from "./bundle-deps.mjs";
import { BUNDLED_LOGGER_PACKAGES, isStubbed, leftOut } from "./bundle-stubs.mjs";
import { latin1Source } from "./latin1-source.mjs";

const daemonDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const repoRoot = join(daemonDir, "..");
const outDir = join(daemonDir, "dist", "cli-bundle");

/**
 * npm packages bundled in rather than imported. jsonc-parser's ES build cannot be loaded by Node itself
 * (its imports name files without extensions), so an import of it loads its CommonJS build, and an ES
 * module importing CommonJS makes Node load and run its CommonJS export lexer over it: ~0.35 MB of the
 * daemon's resident memory, measured. Bundled, its ES build is part of the config chunk. So is zod (the
 * config file's schema): required from node_modules it is 95 CommonJS files, ~43 ms to load; bundled
 * and tree-shaken, the config chunk loads ~12 ms slower than without it (measured), and only the
 * commands that read the config load that chunk (`mcpd connect` and the one-request commands never
 * do: tests/cli/cli-lazy-loading.test.ts). pino and the
 * packages it loads: bundled without their transports (bundle-stubs.mjs) and without their comments.
 *
 * p-queue (a server's calls past its concurrency limit) and its p-timeout are ES modules only, which this
 * CommonJS bundle could require() only on Node versions the daemon does not ask for (require() of ES
 * modules needs 20.19; `engines` says 20.18.1), and which would start Node's ES module loader in the
 * daemon; its eventemitter3 comes with them. Bundled, they are part of the daemon's chunk, which
 * `mcpd connect` and the one-request commands never load (tests/cli/cli-lazy-loading.test.ts).
 *
 * oauth4webapi (the OAuth client's protocol library) is an ES module only, for the same reason bundled:
 * the transports load it with import() on first use, which this CommonJS bundle would turn into a
 * require() that Node 20.18 cannot make; bundled, it is a chunk of its own, loaded on first use.
 */
const BUNDLED_PACKAGES = ["jsonc-parser", "zod", "p-queue", "p-timeout", "eventemitter3", "oauth4webapi", ...BUNDLED_LOGGER_PACKAGES];

/** A bare specifier that is neither one of mcpd's own packages nor bundled: an npm package, left as an import. */
function isExternal(id, importer) {
  if (isStubbed(id, importer)) return false;
  if (id.startsWith("node:")) return true;
  if (id.startsWith(".") || id.startsWith("/") || id.startsWith("\0")) return false;
  if (BUNDLED_PACKAGES.some((p) => id === p || id.startsWith(`${p}/`))) return false;
  return !id.startsWith("@mcpd/");
}

/**
 * The version, written into the bundle as a constant: the compiled version.js finds it by walking up to the
 * daemon's package.json (a few reads, one of them failing, and node:url), ~1 ms of every command's start;
 * the bundle is built from that same manifest, so the constant is the value it would read.
 */
const versionModule = join(daemonDir, "dist", "version.js");
const { version } = JSON.parse(readFileSync(join(daemonDir, "package.json"), "utf8"));
const inlineVersion = {
  name: "mcpd-inline-version",
  load(id) {
    return id === versionModule ? `export const VERSION = ${JSON.stringify(String(version))};\n` : null;
  },
};

rmSync(outDir, { recursive: true, force: true });
/**
 * Fewer, larger shared files: each file Node loads costs ~0.3 ms (resolve, stat, read, compile), which is
 * more than what preparsing a few KB of code it does not run costs. A group holds modules that are loaded
 * together anyway: `cli`, what main.cjs always loads (and two small modules of `mcpd connect`'s); `core`,
 * the protocol's core, the socket checks and the one-request functions (`@mcpd/client/once`), which
 * `mcpd connect` and every command that talks to the daemon load; `client`, the client SDK's session code
 * (and the CLI's use of it), which only the commands that hold a session load (`mcpd stop`, `logs -f`,
 * `auth SERVER`'s flow): tests/cli/cli-lazy-loading.test.ts pins that `mcpd connect`, `mcpd status` and `mcpd call` never
 * do. The protocol's index (`@mcpd/protocol`: the SSE codec) stays out of all three.
 */
const CORE_CLIENT_SDK = [
  "paths",
  "paths-entry",
  "socket-trust",
  "daemon-socket",
  "defaults",
  "server-routing",
  "request-helpers",
  "one-request",
  "one-request-exchange",
  "once-entry",
].join("|");
const GROUPS = [
  {
    name: "cli",
    test: /\/daemon\/dist\/cli\/(args|format|context|cli-defaults|selection-options)\.js$|\/daemon\/dist\/version\.js$/,
  },
  {
    name: "core",
    test: new RegExp(
      `/protocol/dist/(?!index\\.js$|sse(-bytes)?\\.js$|peer/)|/client-sdk/dist/(${CORE_CLIENT_SDK})\\.js$|/daemon/dist/cli/ask-daemon\\.js$`,
    ),
  },
  {
    name: "client",
    test: new RegExp(`/client-sdk/dist/(?!(${CORE_CLIENT_SDK})\\.js$)|/protocol/dist/peer/|/daemon/dist/cli/daemon-client\\.js$`),
  },
];
const result = await build({
  input: { main: join(daemonDir, "dist", "cli", "main.js") },
  plugins: [inlineVersion, leftOut],
  platform: "node",
  external: isExternal,
  // A bundled package's ES build (jsonc-parser's is under "module"), not its UMD one.
  resolve: { mainFields: ["module", "main"] },
  logLevel: "warn",
  write: true,
  output: {
    dir: outDir,
    // CommonJS: Node loads it with synchronous require()s, and never starts its ES module loader (the
    // async resolve/load/link of every file, and fs/promises to read them): ~10 ms of `mcpd connect`'s
    // ~110 ms start, measured (docs/benchmarks.md). Every npm package it imports has a CommonJS entry.
    format: "cjs",
    entryFileNames: "[name].cjs",
    // Names without a content hash: a file's name says what it holds (`status.cjs`, `core.cjs`).
    chunkFileNames: "[name].cjs",
    codeSplitting: { groups: GROUPS },
    // An npm package loaded on demand (undici, ws) by require() too, so the loader stays unloaded.
    dynamicImportInCjs: false,
    // Doc comments are for readers of src/ (shipped beside the bundle); in the bundle they are source
    // text V8 keeps in memory for as long as the daemon runs. Legal comments and annotations stay.
    comments: { legal: true, annotation: true, jsdoc: false },
  },
});

for (const item of result.output) {
  if (item.type !== "chunk") continue;
  const file = join(outDir, item.fileName);
  const code = readFileSync(file, "utf8");
  const escaped = latin1Source(code);
  if (escaped !== code) writeFileSync(file, escaped);
}

/**
 * The directory of a bundled package, as the bundle found it (package.json is not among every package's
 * exports, so it is not resolved by name).
 */
const bundledIds = result.output.flatMap((item) => (item.type === "chunk" ? Object.keys(item.modules) : []));
function bundledPackageDir(name) {
  const marker = `/node_modules/${name}/`;
  const id = bundledIds.find((m) => m.split("\\").join("/").includes(marker));
  if (id === undefined) throw new Error(`bundle-cli: ${name} is to be bundled, but no module of it is in the bundle`);
  const path = id.split("\\").join("/");
  return path.slice(0, path.lastIndexOf(marker) + marker.length - 1);
}

// The bundled packages' licences travel with their code.
const notices = BUNDLED_PACKAGES.map((name) => {
  const dir = bundledPackageDir(name);
  const { version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const licence = ["LICENSE.md", "LICENSE", "LICENSE.txt", "license"].map((f) => join(dir, f)).find((f) => existsSync(f));
  if (!licence) throw new Error(`bundle-cli: ${name} is bundled but has no LICENSE file to ship with it`);
  return `## ${name} ${version}\n\n${readFileSync(licence, "utf8").trim()}\n`;
});
writeFileSync(join(outDir, "THIRD-PARTY-NOTICES.md"), `# Packages bundled into this directory's files\n\n${notices.join("\n")}`);

// The daemon package must declare every npm package the bundle imports (see bundle-deps.mjs).
const manifest = (dir) => JSON.parse(readFileSync(join(repoRoot, dir, "package.json"), "utf8"));
const wanted = Object.assign({}, ...["protocol", "transports", "client-sdk"].map((dir) => manifest(dir).dependencies ?? {}));
const ownFiles = new Set(result.output.map((item) => item.fileName));
const imports = result.output.flatMap((item) =>
  item.type !== "chunk"
    ? []
    : [...item.imports, ...item.dynamicImports]
        .filter((id) => !ownFiles.has(id) && isExternal(id) && !id.startsWith("node:"))
        .map((id) => ({ file: item.fileName, id })),
);
const faults = dependencyFaults(imports, manifest("daemon").dependencies ?? {}, wanted);
if (faults.length > 0) throw new Error(`bundle-cli: ${faults.join("; ")}`);

const modules = {};
for (const item of result.output) {
  if (item.type !== "chunk") continue;
  modules[item.fileName] = Object.keys(item.modules)
    .filter((id) => !id.startsWith("\0"))
    .map((id) => relative(repoRoot, id).split("\\").join("/"))
    .sort();
}
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, "modules.json"), `${JSON.stringify(modules, null, 2)}\n`);
