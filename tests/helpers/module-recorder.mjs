/**
 * `node --import <this file>` (or in NODE_OPTIONS): records every module the process loads, one
 * `<pid> <url>` line each, appended to the file named by MCPD_TEST_MODULE_LOG: every ES module (through the
 * loader hooks of module-recorder-hooks.mjs), and every CommonJS file the process compiles (the bundled
 * `mcpd` command, and the CommonJS packages it requires: undici, ws, ...), which is what the lazy-loading
 * tests look for. Nothing is recorded when the variable is unset, so child processes that inherit the
 * option but not the variable are left alone.
 */
import { appendFileSync } from "node:fs";
import Module, { register } from "node:module";
import { pathToFileURL } from "node:url";

const file = process.env.MCPD_TEST_MODULE_LOG;
if (file) {
  register("./module-recorder-hooks.mjs", import.meta.url, { data: { pid: process.pid, file } });
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    // One short append per file: lines of a few hundred bytes are written whole even with several processes.
    appendFileSync(file, `${process.pid} ${pathToFileURL(filename).href}\n`);
    return compile.call(this, content, filename);
  };
}
