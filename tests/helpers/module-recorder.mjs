/**
 * `node --import <this file>` (or in NODE_OPTIONS): records every module the process loads through the ES
 * module loader, one `<pid> <url>` line each, appended to the file named by MCPD_TEST_MODULE_LOG. That is
 * every ES module, and the entry file of every CommonJS package an ES module imports (pino, undici, ws,
 * jsonc-parser), which is what the lazy-loading tests look for. Nothing is recorded when the variable is
 * unset, so child processes that inherit the option but not the variable are left alone.
 */
import { register } from "node:module";

const file = process.env.MCPD_TEST_MODULE_LOG;
if (file) register("./module-recorder-hooks.mjs", import.meta.url, { data: { pid: process.pid, file } });
