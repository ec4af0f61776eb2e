/**
 * Vitest global setup: bundles the `mcpd` command (daemon/scripts/bundle-cli.mjs) from the packages' dist/
 * before any test runs. Tests spawn daemon/bin/mcpd.js, which runs that bundle, and `tsc -b` alone does not
 * refresh it: without this, a test run after a compile would exercise the command as it was bundled last.
 * The dashboard's page (daemon/scripts/bundle-dashboard.mjs) is built with it, for the same reason.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");

export default function setup(): void {
  if (!existsSync(join(ROOT, "daemon/dist/cli/main.js"))) throw new Error("the packages are not built: run `npm run build` first");
  execFileSync(process.execPath, [join(ROOT, "daemon/scripts/bundle-cli.mjs")], { stdio: "inherit" });
  execFileSync(process.execPath, [join(ROOT, "daemon/scripts/bundle-dashboard.mjs")], { stdio: "inherit" });
}
