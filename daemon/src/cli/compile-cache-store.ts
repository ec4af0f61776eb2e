/**
 * The compile cache's files (see compile-cache.ts): `<state directory>/compile-cache/<bundle>/<file>.cache`,
 * one directory per installed bundle (named by a hash of its path, which a `bundle-dir` file in it
 * records), one entry per bundle file.
 *
 * An entry is `mcpd-compile-cache 2 <source bytes> <code bytes>\n`, the source it was made from, and V8's
 * code for it twice. V8 checks cached code only against its source's length, and a release build does not
 * check the code's own checksum (a damaged entry can crash the process), so an entry is used only when the
 * source is byte for byte the file being loaded and the two copies of the code agree (a torn write or a
 * flipped bit makes them differ): checks that cost a comparison of bytes, not a hash in JavaScript.
 *
 * Trust: the state directory must be this user's and writable by no one else (as the daemon requires), so
 * no one else can put or swap anything beneath it; an entry must moreover be a regular file owned by this
 * user that no one else can write. Entries are written through a new private file (created exclusively,
 * never through a link) renamed into place. Every function here is a best effort that never throws.
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
  readSync,
  renameSync,
  rmdirSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { CLI_DEFAULTS } from "./cli-defaults.js";

/** The name of the cache's directory inside the state directory. */
export const COMPILE_CACHE_DIR = "compile-cache";

/** The file in a bundle's directory that names the bundle directory it caches. */
const BUNDLE_DIR_FILE = "bundle-dir";

/** The first bytes of an entry, followed by the source's and the code's lengths in bytes and a newline. */
const MAGIC = "mcpd-compile-cache 2 ";

/** Runs `fn`, ignoring what it throws: for clean-ups of something that failed already. */
function quietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // nothing more to undo
  }
}

/** Whether `dir` is a real directory (not a link) owned by `uid` that no one else can write. */
export function trustedDir(dir: string, uid: number): boolean {
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && st.uid === uid && (st.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/** Whether `file` is a regular file (not a link) owned by `uid`: one this user may remove. */
function ownFile(file: string, uid: number): boolean {
  try {
    const st = lstatSync(file);
    return st.isFile() && st.uid === uid;
  } catch {
    return false;
  }
}

/** The directory name of bundle directory `bundleDir`'s entries: 64 bits of FNV-1a of its path, in hex. */
export function bundleKey(bundleDir: string): string {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < bundleDir.length; i++) {
    const c = bundleDir.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}

/** The entry of bundle file `file` in `dir`: its base name, which names one file of one build. */
export function entryPath(dir: string, file: string): string {
  return path.join(dir, `${path.basename(file)}.cache`);
}

/**
 * The cached code in `entry` for exactly `source` (the file's bytes), or undefined: no entry, an entry made
 * from other source, a damaged one, one that is not a regular file owned by `uid` and writable by it alone,
 * or one larger than {@link CLI_DEFAULTS.compileCacheMaxEntryBytes}.
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
    const nl = bytes.indexOf(10);
    if (nl < 0 || nl > 64) return undefined;
    const [magic, version, sourceBytes, codeBytes, extra] = bytes.toString("latin1", 0, nl).split(" ");
    const codeLength = Number(codeBytes);
    if (`${magic} ${version} ` !== MAGIC || Number(sourceBytes) !== source.length || extra !== undefined) return undefined;
    const start = nl + 1 + source.length;
    if (!Number.isSafeInteger(codeLength) || codeLength <= 0 || bytes.length !== start + 2 * codeLength) return undefined;
    if (!bytes.subarray(nl + 1, start).equals(source)) return undefined;
    const code = bytes.subarray(start, start + codeLength);
    return code.equals(bytes.subarray(start + codeLength)) ? code : undefined;
  } catch {
    return undefined;
  } finally {
    quietly(() => closeSync(fd));
  }
}

/**
 * Writes the code `code()` makes (V8's, for `source`) as `entry`: into a new private file beside it
 * (created exclusively, so never through a link; opened before the code is made, so a directory that
 * cannot be written costs nothing more), renamed over the entry. Returns false, leaving nothing behind,
 * when that fails or the entry would be larger than {@link CLI_DEFAULTS.compileCacheMaxEntryBytes}.
 */
export function writeEntry(entry: string, source: Buffer, code: () => Buffer): boolean {
  const temp = `${entry}.${process.pid}.tmp`;
  let fd: number;
  try {
    fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch {
    return false; // something is in the way (not ours to remove), or the directory is not writable
  }
  let open = true;
  try {
    const data = code();
    const head = Buffer.from(`${MAGIC}${source.length} ${data.length}\n`, "latin1");
    if (head.length + source.length + 2 * data.length > CLI_DEFAULTS.compileCacheMaxEntryBytes) throw new RangeError("too large");
    for (const part of [head, source, data, data]) {
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

/**
 * Makes the entries' directory `<stateDir>/compile-cache/<bundleKey>` for `bundleDir` when missing (mode
 * 0700, recording `bundleDir` in it), never the state directory itself. Returns the directory when it may
 * hold entries: every level a real directory of `uid` that no one else can write.
 */
export function prepareStoreDir(stateDir: string, bundleDir: string, uid: number): string | undefined {
  if (!trustedDir(stateDir, uid)) return undefined;
  const root = path.join(stateDir, COMPILE_CACHE_DIR);
  const dir = path.join(root, bundleKey(bundleDir));
  for (const d of [root, dir]) {
    try {
      mkdirSync(d, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") return undefined;
    }
    if (!trustedDir(d, uid)) return undefined;
  }
  const record = path.join(dir, BUNDLE_DIR_FILE);
  if (!existsSync(record)) writeNewFile(record, bundleDir);
  return dir;
}

/** Writes `text` as a new file `file` (exclusively, mode 0600), when it does not exist yet. */
function writeNewFile(file: string, text: string): void {
  quietly(() => {
    const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
  });
}

/** The bundle directory `dir` caches (its `bundle-dir` file), or undefined when it records none. */
function recordedBundleDir(dir: string, uid: number): string | undefined {
  const record = path.join(dir, BUNDLE_DIR_FILE);
  if (!ownFile(record, uid)) return undefined;
  const fd = openSync(record, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const buf = Buffer.alloc(4096);
    const text = buf.toString("utf8", 0, readSync(fd, buf, 0, buf.length, null));
    return path.isAbsolute(text) ? text : undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Keeps the cache bounded, run when entries were just written into `dir` (the entries of `bundleDir`):
 * there, removes temporary files a process that died while writing left (older than
 * {@link CLI_DEFAULTS.compileCacheTempMaxAgeMs}) and entries of files the bundle no longer has (an older
 * build's); beside it, the directories of bundles that no longer exist (an uninstalled or upgraded mcpd),
 * and any that records no bundle once older than {@link CLI_DEFAULTS.compileCacheStaleEntryMaxAgeMs}.
 * Removes only this user's regular files, and directories it emptied.
 */
export function pruneStore(dir: string, bundleDir: string, uid: number, now: number): void {
  const list = (d: string): string[] => {
    try {
      return readdirSync(d);
    } catch {
      return [];
    }
  };
  const removeOwn = (file: string): void => {
    if (ownFile(file, uid)) quietly(() => unlinkSync(file));
  };
  const age = (file: string): number => {
    try {
      return now - lstatSync(file).mtimeMs;
    } catch {
      return 0;
    }
  };
  for (const name of list(dir)) {
    const file = path.join(dir, name);
    if (name.endsWith(".tmp") && age(file) > CLI_DEFAULTS.compileCacheTempMaxAgeMs) removeOwn(file);
    else if (name.endsWith(".cache") && !existsSync(path.join(bundleDir, name.slice(0, -".cache".length)))) removeOwn(file);
  }
  const root = path.dirname(dir);
  for (const name of list(root)) {
    const other = path.join(root, name);
    if (other === dir || !trustedDir(other, uid)) continue;
    let recorded: string | undefined;
    try {
      recorded = recordedBundleDir(other, uid);
    } catch {
      recorded = undefined;
    }
    const gone = recorded !== undefined ? !existsSync(recorded) : age(other) > CLI_DEFAULTS.compileCacheStaleEntryMaxAgeMs;
    if (!gone) continue;
    for (const f of list(other)) removeOwn(path.join(other, f));
    quietly(() => rmdirSync(other));
  }
}
