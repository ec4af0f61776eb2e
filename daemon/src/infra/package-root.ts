import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_NAME = "@mcpd/daemon";

/** The daemon package: its directory and its manifest's version. */
interface DaemonPackage {
  dir: string;
  version: string;
}

let found: DaemonPackage | undefined;

/**
 * The daemon package, found by walking up from this module to the package.json that names it. The same
 * code runs from dist/ as the compiler wrote it and from the bundled command in dist/cli-bundle/, at
 * different depths, in the repository and installed: a fixed relative path would be right for only one
 * of them. Read once.
 * @throws Error when no enclosing package.json names the daemon package (a broken install).
 */
function daemonPackage(): DaemonPackage {
  if (found !== undefined) return found;
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    const version = versionIfDaemon(join(dir, "package.json"));
    if (version !== undefined) {
      found = { dir, version };
      return found;
    }
    if (dirname(dir) === dir) throw new Error(`no ${PACKAGE_NAME} package.json above ${start}`);
  }
}

/** The manifest's version when `file` is the daemon package's manifest; undefined otherwise. */
function versionIfDaemon(file: string): string | undefined {
  try {
    const m = JSON.parse(readFileSync(file, "utf8")) as { name?: unknown; version?: unknown };
    return m.name === PACKAGE_NAME ? String(m.version) : undefined;
  } catch {
    return undefined;
  }
}

/** The daemon package's version, from its package.json. */
export function packageVersion(): string {
  return daemonPackage().version;
}

/** Absolute path of the `mcpd` bin script (bin/mcpd.js in the daemon package), which spawns and service files run. */
export function binPath(): string {
  return join(daemonPackage().dir, "bin", "mcpd.js");
}

/** Absolute path of a file of the daemon package (`dist/dashboard/app.js`), from its root. */
export function packagePath(...parts: string[]): string {
  return join(daemonPackage().dir, ...parts);
}
