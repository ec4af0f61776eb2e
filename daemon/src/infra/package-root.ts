import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_NAME = "@mcpd/daemon";

let root: string | undefined;

/**
 * The daemon package's directory (the one holding its package.json), found by walking up from this
 * module. The same code runs from dist/ as the compiler wrote it and from the bundled command in
 * dist/cli-bundle/, at different depths, in the repository and installed: a fixed relative path would
 * be right for only one of them.
 * @throws Error when no enclosing package.json names the daemon package (a broken install).
 */
export function packageRoot(): string {
  if (root !== undefined) return root;
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    if (isDaemonPackage(join(dir, "package.json"))) return (root = dir);
    if (dirname(dir) === dir) throw new Error(`no ${PACKAGE_NAME} package.json above ${start}`);
  }
}

function isDaemonPackage(file: string): boolean {
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as { name?: unknown }).name === PACKAGE_NAME;
  } catch {
    return false;
  }
}

/** Absolute path of the `mcpd` bin script (bin/mcpd.js in the daemon package), which spawns and service files run. */
export function binPath(): string {
  return join(packageRoot(), "bin", "mcpd.js");
}
