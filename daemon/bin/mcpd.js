#!/usr/bin/env node
// The installed `mcpd` command. The real entry point is dist/cli/main.js, bundled as CommonJS with what it
// reaches into dist/cli-bundle/ (scripts/bundle-cli.mjs: fewer files to load at every start, and no ES
// module loader to start); this shim exists so the bin is executable straight from git (npm links it
// before `prepare` builds dist/). It is CommonJS too (bin/package.json), keeping its name: service files
// written by earlier versions run this path.
"use strict";
// biome-ignore lint/style/noCommonJs: CommonJS on purpose, for the start-up (see above).
const { main } = require("../dist/cli-bundle/main.cjs");

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === "number") process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`mcpd: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
