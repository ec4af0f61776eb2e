/**
 * Bundles the `mcpd` command into dist/cli-bundle/, which bin/mcpd.js runs: dist/cli/main.js and every
 * module of mcpd's it reaches (the other @mcpd packages included), as one entry file, one file per
 * lazily loaded command and a few shared chunks. npm packages (pino, undici, ws, ...) and Node's own
 * modules stay imports, loaded from node_modules as before.
 *
 * Why: `mcpd connect` is spawned by every agent session, so its start-up is paid again and again. Loaded
 * as the compiler writes it, it reads, resolves and compiles about 23 ES modules; bundled, about 7 files.
 * That is several ms of a ~85 ms start (docs/benchmarks.md, section 4). The library entry points
 * (`@mcpd/daemon`, `@mcpd/client`, ...) stay the compiler's dist/ files: only the command is bundled.
 *
 * Also writes dist/cli-bundle/modules.json: for each output file, the compiled modules it holds (paths
 * relative to the repository root), so a test can still tell which of mcpd's modules a process loaded.
 *
 * Run after `tsc -b` (it reads dist/): `npm run build` runs both. Usage: node daemon/scripts/bundle-cli.mjs
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const daemonDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const repoRoot = join(daemonDir, "..");
const outDir = join(daemonDir, "dist", "cli-bundle");

/** A bare specifier that is not one of mcpd's own packages: an npm package, left as an import. */
function isExternal(id) {
  if (id.startsWith("node:")) return true;
  if (id.startsWith(".") || id.startsWith("/") || id.startsWith("\0")) return false;
  return !id.startsWith("@mcpd/");
}

rmSync(outDir, { recursive: true, force: true });
const result = await build({
  input: { main: join(daemonDir, "dist", "cli", "main.js") },
  platform: "node",
  external: isExternal,
  logLevel: "warn",
  write: true,
  output: {
    dir: outDir,
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "[name]-[hash].js",
  },
});

// The bundle imports the npm packages of every @mcpd package it holds, so the daemon package must declare
// them itself: installed, another package's dependencies are not visible from the daemon's files.
const manifest = (dir) => JSON.parse(readFileSync(join(repoRoot, dir, "package.json"), "utf8"));
const declared = manifest("daemon").dependencies ?? {};
const faults = [];
const ownFiles = new Set(result.output.map((item) => item.fileName));
for (const item of result.output) {
  if (item.type !== "chunk") continue;
  for (const id of [...item.imports, ...item.dynamicImports]) {
    if (ownFiles.has(id) || !isExternal(id) || id.startsWith("node:")) continue;
    const name = id.startsWith("@") ? id.split("/").slice(0, 2).join("/") : (id.split("/")[0] ?? id);
    const wanted = ["protocol", "transports", "client-sdk"].map((dir) => manifest(dir).dependencies?.[name]).find(Boolean);
    if (declared[name] === undefined)
      faults.push(`${item.fileName} imports ${id}, which daemon/package.json does not list in dependencies`);
    else if (wanted !== undefined && wanted !== declared[name])
      faults.push(`daemon/package.json lists ${name} ${declared[name]}, but the package that uses it wants ${wanted}`);
  }
}
if (faults.length > 0) throw new Error(`bundle-cli: ${[...new Set(faults)].join("; ")}`);

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
