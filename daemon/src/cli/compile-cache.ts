/**
 * A cache of V8's compiled code for the `mcpd` command's bundled files (dist/cli-bundle/), kept in the state
 * directory. Every agent session spawns `mcpd connect`, and a user types `mcpd status` or `mcpd call` often:
 * without it, each of those processes parses and compiles mcpd's code from its source again (measured in
 * docs/benchmarks.md, section 4).
 *
 * How: bin/mcpd.js calls {@link enableCompileCache} before it loads the bundle. The bundle's files are then
 * compiled by {@link loadCached} with the code V8 serialized in an earlier run, when there is one for
 * exactly that source (compile-cache-store.ts: the entries, their checks and their bounds), and the code of
 * the files that had none (or whose code V8 refused: another Node version, other V8 flags) is written a
 * little after the start (for long runs such as `mcpd connect`'s, which an agent may end with a signal)
 * or at exit, whichever comes first, functions compiled until then included. Node 22 has a compile cache
 * of its own (`module.enableCompileCache`); this one works the same on every Node mcpd supports.
 *
 * What differs from Node's own loading of a bundle file: it is compiled by `vm.Script` (so hooks of
 * `Module.prototype._compile` do not see it), and its `require` has `resolve` and `cache` only (the bundle
 * calls `require(id)`, nothing more; it has no `import()`). Stack traces are the same.
 *
 * Off for `mcpd start` (the daemon's start-up is paid once, and its memory is better without every
 * function of an earlier run deserialized), when NODE_DISABLE_COMPILE_CACHE is set (Node's own switch for
 * its cache), under Node's `--experimental-policy` (whose integrity checks see `_compile` only), and when
 * the state directory is missing or not the user's own. Any fault means compiling from source as Node
 * would, never an error.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Script } from "node:vm";
import { resolvePaths } from "@mcpd/client/paths";
import { CLI_DEFAULTS } from "./cli-defaults.js";
import {
  bundleKey,
  COMPILE_CACHE_DIR,
  entryPath,
  prepareStoreDir,
  pruneStore,
  readEntry,
  trustedDir,
  writeEntry,
} from "./compile-cache-store.js";

/** CommonJS's wrapper, as Node's loader writes it around a file's source. */
const WRAP_HEAD = "(function (exports, require, module, __filename, __dirname) { ";
const WRAP_TAIL = "\n});";

/**
 * What the cache needs of Node's CommonJS loader (the `Module` class, `module.constructor` in a CommonJS
 * file): given by bin/mcpd.js, since importing `node:module` would load Node's ES module loader, which the
 * command never needs.
 */
export interface CjsLoader {
  readonly _extensions: Record<string, ((module: CjsModule, filename: string) => void) | undefined>;
  readonly _cache: NodeJS.Require["cache"];
  _resolveFilename(request: string, parent: CjsModule): string;
}

/** A CommonJS module, as the loader hands it to an extension's handler. */
export interface CjsModule {
  exports: unknown;
  require(id: string): unknown;
}

/** A file compiled without usable cached code: its code is written at exit. */
interface Pending {
  readonly entry: string;
  readonly source: Buffer;
  readonly script: Script;
}

/** What {@link enableCompileCache} set up, for tests and for the exit handler. */
export interface CompileCache {
  /** The cache's directory. */
  readonly dir: string;
  /** How many files were compiled with cached code, and how many without (their code written at exit). */
  readonly stats: { hits: number; misses: number };
  /** Writes the code of the files compiled without cached code (done on a timer or at exit; idempotent). */
  flush(): void;
}

/** The user id entries must belong to; undefined where there is none (Windows), which turns the cache off. */
function currentUid(): number | undefined {
  return typeof process.getuid === "function" ? process.getuid() : undefined;
}

/** The `require` a bundled file is given: the bundle calls it with a path or a module name, nothing else. */
function requireFor(loader: CjsLoader, module: CjsModule): NodeJS.Require {
  const require = module.require.bind(module) as NodeJS.Require;
  require.resolve = ((request: string) => loader._resolveFilename(request, module)) as NodeJS.RequireResolve;
  require.cache = loader._cache;
  return require;
}

/**
 * Compiles and runs the CommonJS file `filename` as `module`, as Node's loader would, with the cached code
 * of an earlier run when `dir` holds an entry for exactly its source. Files without one go on `pending`.
 */
export function loadCached(
  loader: CjsLoader,
  module: CjsModule,
  filename: string,
  dir: string,
  uid: number,
  stats: CompileCache["stats"],
  pending: Pending[],
): void {
  const source = readFileSync(filename);
  const entry = entryPath(dir, filename);
  const cachedData = readEntry(entry, source, uid);
  const script = new Script(`${WRAP_HEAD}${source.toString("utf8")}${WRAP_TAIL}`, {
    filename,
    // The wrapper shares the source's first line: its columns there are the file's own.
    columnOffset: -WRAP_HEAD.length,
    ...(cachedData !== undefined ? { cachedData } : {}),
  });
  if (cachedData !== undefined && !script.cachedDataRejected) stats.hits++;
  else {
    stats.misses++;
    pending.push({ entry, source, script });
  }
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, requireFor(loader, module), module, filename, path.dirname(filename));
}

/** Whether Node runs with options the cache must stay out of the way of (`--experimental-policy`). */
function policyInForce(env: NodeJS.ProcessEnv): boolean {
  return [...process.execArgv, env.NODE_OPTIONS ?? ""].some((arg) => arg.includes("--experimental-policy"));
}

/**
 * Turns the cache on for the CommonJS files of `bundleDir` (the directory of the bundled `mcpd` command),
 * loaded by `loader`, when the command `argv` runs may use it (see the file's comment), with entries in
 * `<state directory>/compile-cache/<bundle>/`. Returns undefined, changing nothing, when it stays off.
 */
export function enableCompileCache(
  loader: CjsLoader,
  bundleDir: string,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): CompileCache | undefined {
  const uid = currentUid();
  if (uid === undefined || argv[0] === "start" || env.NODE_DISABLE_COMPILE_CACHE || policyInForce(env)) return undefined;
  let stateDir: string;
  try {
    stateDir = resolvePaths(env).stateDir;
  } catch {
    return undefined;
  }
  // No one else may put or swap anything beneath it (the daemon asks the same of it).
  if (!trustedDir(stateDir, uid)) return undefined;
  const ownDir = path.resolve(bundleDir);
  const dir = path.join(stateDir, COMPILE_CACHE_DIR, bundleKey(ownDir));
  const extensions = loader._extensions;
  // The handler Node uses for a `.cjs` file: its own (Node 22), else `.js`'s (Node 20), which is wrapped then
  // rather than a `.cjs` one added (that would make `require("./x")` try `x.cjs` everywhere).
  const key = extensions[".cjs"] !== undefined ? ".cjs" : ".js";
  const builtin = extensions[key];
  if (builtin === undefined) return undefined;
  const stats = { hits: 0, misses: 0 };
  const pending: Pending[] = [];
  extensions[key] = function (this: unknown, module, filename) {
    if (!filename.endsWith(".cjs") || path.dirname(filename) !== ownDir) return builtin.call(this, module, filename);
    loadCached(loader, module, filename, dir, uid, stats, pending);
  };
  const cache: CompileCache = {
    dir,
    stats,
    flush() {
      const todo = pending.splice(0);
      if (todo.length === 0 || prepareStoreDir(stateDir, ownDir, uid) !== dir) return;
      for (const p of todo) writeEntry(p.entry, p.source, () => p.script.createCachedData());
      pruneStore(dir, ownDir, uid, Date.now());
    },
  };
  setTimeout(() => cache.flush(), CLI_DEFAULTS.compileCacheWriteDelayMs).unref();
  process.once("exit", () => cache.flush());
  return cache;
}
