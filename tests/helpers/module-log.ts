/**
 * Reading what a process loaded, as recorded by tests/helpers/module-recorder.mjs: for the tests that pin
 * lazy loading (a command loads only what it runs; a daemon with only stdio servers never loads its HTTP
 * and WebSocket libraries).
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The `--import` module that records loaded modules into the file named by `MCPD_TEST_MODULE_LOG`. */
export const MODULE_RECORDER = join(dirname(fileURLToPath(import.meta.url)), "module-recorder.mjs");

/** Environment that makes every Node process started with it (and its Node children that inherit it) record into `logFile`. */
export function recordingEnv(env: NodeJS.ProcessEnv, logFile: string): NodeJS.ProcessEnv {
  const options = [env.NODE_OPTIONS, `--import=${MODULE_RECORDER}`].filter(Boolean).join(" ");
  return { ...env, NODE_OPTIONS: options, MCPD_TEST_MODULE_LOG: logFile };
}

/**
 * The module URLs process `pid` loaded (every process's when `pid` is undefined), in load order. A file of
 * the bundled `mcpd` command (dist/cli-bundle/, see daemon/scripts/bundle-cli.mjs) stands for the compiled
 * modules it holds: it is listed as one URL per module, `<file URL>#/<module path in the repository>` (e.g.
 * `.../dist/cli-bundle/connect-Ab12.cjs#/daemon/dist/cli/commands/connect.js`), so a test can still ask which
 * of mcpd's modules a process loaded, and from where. A file recorded twice by one process (a CommonJS entry
 * point is both loaded by the ES module loader and compiled when `--import` is given) is listed once.
 */
export function loadedModules(logFile: string, pid?: number): string[] {
  return recordedUrls(logFile, pid).flatMap(expandBundleFile);
}

const BUNDLE_FILE = /^file:\/\/(.*\/cli-bundle)\/([^/]+\.cjs)$/;
const manifests = new Map<string, Record<string, string[]>>();

function expandBundleFile(url: string): string[] {
  const m = BUNDLE_FILE.exec(url);
  if (!m) return [url];
  const dir = m[1] as string;
  let manifest = manifests.get(dir);
  if (!manifest) {
    manifest = JSON.parse(readFileSync(join(dir, "modules.json"), "utf8")) as Record<string, string[]>;
    manifests.set(dir, manifest);
  }
  const modules = manifest[m[2] as string];
  if (!modules) throw new Error(`${url} is not in ${dir}/modules.json: the bundle and its manifest disagree`);
  return modules.map((mod) => `${url}#/${mod}`);
}

function recordedUrls(logFile: string, pid?: number): string[] {
  let text = "";
  try {
    text = readFileSync(logFile, "utf8");
  } catch {
    return [];
  }
  const out: string[] = [];
  const seen = new Set<string>();
  for (const line of text.split("\n")) {
    const space = line.indexOf(" ");
    if (space <= 0 || seen.has(line)) continue;
    seen.add(line);
    if (pid === undefined || Number(line.slice(0, space)) === pid) out.push(line.slice(space + 1));
  }
  return out;
}

/** The npm packages among `urls` (by the last `node_modules/<name>` in each path), sorted and unique. */
export function npmPackages(urls: readonly string[]): string[] {
  const names = new Set<string>();
  for (const url of urls) {
    const m = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (m) names.add(m[1] as string);
  }
  return [...names].sort();
}
