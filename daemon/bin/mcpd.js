#!/usr/bin/env node
// The installed `mcpd` command. The real entry point is dist/cli/main.js, bundled with what it reaches
// into dist/cli-bundle/ (scripts/bundle-cli.mjs: fewer files to load at every start); this shim exists so
// the bin is executable straight from git (npm links it before `prepare` builds dist/).
import { main } from "../dist/cli-bundle/main.js";

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === "number") process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`mcpd: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
