/**
 * A cache of V8's compiled code for the `mcpd` command's bundled files (dist/cli-bundle/), kept in the state
 * directory. Every agent session spawns `mcpd connect`, and a user types `mcpd status` or `mcpd call` often:
 * without it, each of those processes parses and compiles mcpd's code from its source again, about a tenth
 * of its whole run (docs/benchmarks.md, section 4).
 *
 * How: bin/mcpd.js calls {@link enableCompileCache} before it loads the bundle. The bundle's files are then
 * compiled by {@link loadCached} with the code V8 serialized at the end of an earlier run, when there is
 * one for exactly that source, and the code of the files that had none (or whose code V8 refused: another
 * Node version, other V8 flags) is written when the process exits, functions compiled during the run
 * included. Node 22 has a compile cache of its own (`module.enableCompileCache`); this one works the same on
 * every Node mcpd supports.
 *
 * Safety: V8 checks cached code only against its source's length, so each entry carries the whole source
 * it was made from, and is used only when that is byte for byte the file being loaded. An entry is used
 * only when it is a regular file owned by this user that no one else can write, and it is written only
 * into a directory with the same properties, by a private temporary file renamed into place (never
 * through a symbolic link). The cache is an optimization: any fault (no state directory yet, a full disk,
 * a foreign file) means compiling from source as Node would, never an error.
 *
 * Off for `mcpd start` (the daemon's start-up is paid once, and its memory is better without every
 * function of an earlier run deserialized), and when NODE_DISABLE_COMPILE_CACHE is set (Node's own switch
 * for its cache).
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { Script } from "node:vm";
import { resolvePaths } from "@mcpd/client/paths";
import { CLI_DEFAULTS } from "./cli-defaults.js";

/** The name of the cache's directory inside the state directory. */
export const COMPILE_CACHE_DIR = "compile-cache";

/** The first bytes of an entry, followed by the source's length in bytes and a newline. */
const MAGIC = "mcpd-compile-cache 1 ";

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
  /** Writes the code of the files compiled without cached code (done at exit; idempotent). */
  flush(): void;
}

/** The user id entries must belong to; undefined where there is none (Windows), which turns the cache off. */
function currentUid(): number | undefined {
  return typeof process.getuid === "function" ? process.getuid() : undefined;
}

/** The entry file of bundle file `file` in `dir`: its base name, which names one chunk of one build. */
export function entryPath(dir: string, file: string): string {
  return path.join(dir, `${path.basename(file)}.cache`);
}

/**
 * The cached code in `entry` for exactly `source` (the file's bytes), or undefined: no entry, an entry made
 * from other source, one that is not a regular file owned by `uid` and writable by it alone, or one larger
 * than {@link CLI_DEFAULTS.compileCacheMaxEntryBytes}. Never throws.
 */
export function readEntry(entry: string, source: Buffer, uid: number): Buffer | undefined {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO in the entry's place would otherwise block the open; it is refused below.
    fd = openSync(entry, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.uid !== uid || (st.mode & 0o022) !== 0 || st.size > CLI_DEFAULTS.compileCacheMaxEntryBytes) return undefined;
    const bytes = Buffer.allocUnsafe(st.size);
    let got = 0;
    while (got < bytes.length) {
      const n = readSync(fd, bytes, got, bytes.length - got, null);
      if (n === 0) return undefined;
      got += n;
    }
    const head = `${MAGIC}${source.length}\n`;
    const start = head.length;
    if (bytes.length <= start + source.length || bytes.toString("latin1", 0, start) !== head) return undefined;
    if (!bytes.subarray(start, start + source.length).equals(source)) return undefined;
    return bytes.subarray(start + source.length);
  } catch {
    return undefined;
  } finally {
    quietly(() => closeSync(fd));
  }
}

/**
 * Whether `dir` may hold entries: a real directory (not a symbolic link) owned by `uid` that no one else
 * can write. Creates it (mode 0700) when missing and its parent exists; never creates the parent.
 */
export function usableDir(dir: string, uid: number): boolean {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") return false;
  }
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && st.uid === uid && (st.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/**
 * Writes `data`, the code V8 made from `source`, as `entry`: into a new private file beside it (created
 * exclusively, so never through a link), renamed over the entry. Returns false, leaving nothing behind,
 * when that fails. Never throws.
 */
export function writeEntry(entry: string, source: Buffer, data: Buffer): boolean {
  const temp = `${entry}.${process.pid}.tmp`;
  let fd: number;
  try {
    fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch {
    return false; // something is in the way (not ours to remove), or the directory is not writable
  }
  let open = true;
  try {
    for (const part of [Buffer.from(`${MAGIC}${source.length}\n`, "latin1"), source, data]) {
      let off = 0;
      while (off < part.length) off += writeSync(fd, part, off, part.length - off);
    }
    open = false;
    closeSync(fd);
    renameSync(temp, entry);
    return true;
  } catch {
    if (open) quietly(() => closeSync(fd));
    quietly(() => unlinkSync(temp));
    return false;
  }
}

/** Runs `fn`, ignoring what it throws: for the clean-up of a write that failed already. */
function quietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // nothing more to undo
  }
}

/**
 * Keeps `dir` bounded, when entries were just written: removes temporary files left by a process that
 * died while writing (older than {@link CLI_DEFAULTS.compileCacheTempMaxAgeMs}), and entries of files
 * that `bundleDir` no longer has, unless one was written within
 * {@link CLI_DEFAULTS.compileCacheStaleEntryMaxAgeMs} (another installed mcpd may still use it). Never throws.
 */
export function pruneDir(dir: string, bundleDir: string, now: number): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    const isTemp = name.endsWith(".tmp");
    if (!isTemp && !name.endsWith(".cache")) continue;
    if (!isTemp && existsSync(path.join(bundleDir, name.slice(0, -".cache".length)))) continue;
    const maxAge = isTemp ? CLI_DEFAULTS.compileCacheTempMaxAgeMs : CLI_DEFAULTS.compileCacheStaleEntryMaxAgeMs;
    try {
      if (now - lstatSync(file).mtimeMs > maxAge) unlinkSync(file);
    } catch {
      // gone already, or not ours to remove
    }
  }
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

/**
 * Turns the cache on for the CommonJS files of `bundleDir` (the directory of the bundled `mcpd` command),
 * loaded by `loader`, when the command `argv` runs may use it (see the file's comment), with entries in
 * `<state directory>/compile-cache/`. Returns undefined, changing nothing, when it stays off.
 */
export function enableCompileCache(
  loader: CjsLoader,
  bundleDir: string,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): CompileCache | undefined {
  const uid = currentUid();
  if (uid === undefined || argv[0] === "start" || env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  let dir: string;
  try {
    dir = path.join(resolvePaths(env).stateDir, COMPILE_CACHE_DIR);
  } catch {
    return undefined;
  }
  const ownDir = path.resolve(bundleDir);
  const extensions = loader._extensions;
  // Node 20 has no handler of its own for `.cjs` (its loader falls back to `.js`'s); Node 22 has one.
  const builtin = extensions[".cjs"] ?? extensions[".js"];
  if (builtin === undefined) return undefined;
  const stats = { hits: 0, misses: 0 };
  const pending: Pending[] = [];
  extensions[".cjs"] = function (this: unknown, module, filename) {
    if (path.dirname(filename) !== ownDir) return builtin.call(this, module, filename);
    loadCached(loader, module, filename, dir, uid, stats, pending);
  };
  const cache: CompileCache = {
    dir,
    stats,
    flush() {
      const todo = pending.splice(0);
      if (todo.length === 0 || !usableDir(dir, uid)) return;
      for (const p of todo) {
        try {
          writeEntry(p.entry, p.source, p.script.createCachedData());
        } catch {
          // V8 could not serialize it: the file is compiled from source next time too
        }
      }
      pruneDir(dir, ownDir, Date.now());
    },
  };
  process.once("exit", () => cache.flush());
  return cache;
}
