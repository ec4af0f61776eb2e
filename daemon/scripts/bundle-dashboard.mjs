/**
 * Builds the dashboard page (daemon/dashboard-ui/, plain TypeScript and DOM) into dist/dashboard/: one
 * minified app.js and app.css, which the daemon serves at /dashboard/app.js and /dashboard/app.css. No
 * framework, no fonts, nothing fetched at run time. Type-checked by `tsc -p tsconfig.tests.json` (DOM lib).
 * Run by `npm run build`. Usage: node daemon/scripts/bundle-dashboard.mjs
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const daemonDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const srcDir = join(daemonDir, "dashboard-ui");
const outDir = join(daemonDir, "dist", "dashboard");

mkdirSync(outDir, { recursive: true });
await build({
  input: join(srcDir, "main.ts"),
  platform: "browser",
  logLevel: "warn",
  output: { file: join(outDir, "app.js"), format: "esm", minify: true },
});
copyFileSync(join(srcDir, "app.css"), join(outDir, "app.css"));
