/**
 * Parts of pino and sonic-boom that the daemon never runs, replaced in the bundled command by stubs:
 * pino's transports (logging from a worker thread: `pino.transport()`, thread-stream, `node:worker_threads`
 * and `node:module`, loaded by pino at start whether used or not) and sonic-boom's one `assert` (`node:assert`
 * for a type check of its own descriptor). The daemon's logger writes in its own thread, to a destination
 * it makes itself (daemon/src/infra/logger.ts, log-file.ts). Left in, they cost the daemon's resident memory
 * (docs/benchmarks.md, analysis). The library entry points (`@mcpd/daemon`'s dist/) load pino unchanged.
 */

/** A rolldown plugin: `{ [importer package]: { [specifier]: stub source } }`, each stub a CommonJS module. */
const STUBS = {
  pino: {
    "./transport": "module.exports = function transport() { throw new Error('pino transports are left out of the mcpd command'); };\n",
    "./lib/transport": "module.exports = function transport() { throw new Error('pino transports are left out of the mcpd command'); };\n",
    // pino asks only whether it runs in the main thread (to flush its own destinations at exit): it does.
    worker_threads: "module.exports = { isMainThread: true };\n",
  },
  "sonic-boom": {
    assert: "module.exports = function assert(ok, message) { if (!ok) throw new Error(message); };\n",
  },
};

const PREFIX = "\0mcpd-stub:";

/** The package a module of node_modules belongs to (`pino`, `@scope/name`), or undefined. */
function packageOf(path) {
  const all = [...(path ?? "").replaceAll("\\", "/").matchAll(/\/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)];
  return all.at(-1)?.[1];
}

/** Whether `source` imported by `importer` is replaced by a stub (the bundler must not leave it external). */
export function isStubbed(source, importer) {
  const pkg = packageOf(importer);
  return pkg !== undefined && STUBS[pkg]?.[source] !== undefined;
}

export const leftOut = {
  name: "mcpd-left-out",
  resolveId(source, importer) {
    return isStubbed(source, importer) ? `${PREFIX}${packageOf(importer)}:${source}` : null;
  },
  load(id) {
    if (!id.startsWith(PREFIX)) return null;
    const [pkg, source] = id.slice(PREFIX.length).split(":");
    return STUBS[pkg][source];
  },
};

/** The npm packages the stubs make part of the bundle: pino and what it loads besides its transports. */
export const BUNDLED_LOGGER_PACKAGES = [
  "pino",
  "sonic-boom",
  "@pinojs/redact",
  "atomic-sleep",
  "on-exit-leak-free",
  "pino-std-serializers",
  "quick-format-unescaped",
  "safe-stable-stringify",
];
