/**
 * The peers of the "peers" scenario (the tools a user would pick instead of mcpd), installed at bench time
 * into a gitignored cache, tests/bench/.peers/<name>@<version>/, with `npm install --prefix DIR --no-save`
 * of the pinned versions below: never dependencies of the repository, so CI and `npm ci` stay light. A
 * peer already in the cache is not installed again. A peer that cannot be installed (offline, registry
 * error, a version withdrawn) is skipped with the reason, and the rest of the run goes on.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, removeDir } from "./env.mjs";

/** The peers and the versions measured (exact versions: a figure is only comparable with its version). */
export const PEER_VERSIONS = {
  "mcp-proxy": "6.7.19",
  supergateway: "4.0.0",
  "mcp-hub": "4.2.1",
};

/** The cache (gitignored). */
export const PEERS_DIR = join(ROOT, "tests/bench/.peers");

/** An install may fetch a few hundred packages on a slow network; past this it is given up (and the peer skipped). */
const INSTALL_TIMEOUT_MS = 300_000;
/** What `npm run` sets about the project it runs in. */
const PROJECT_ENV = /^npm_(package_|lifecycle_|config_(local_prefix|workspaces?|include_workspace_root)$)/i;
/** Written last, once the install was checked: a directory without it is a broken install and is redone. */
const MARKER = "installed.json";

function readJson(file) {
  return JSON.parse(readFileSync(file, "utf8"));
}

/** The npm to run: the one running `npm run bench` when there is one (npm_execpath), else `npm` on the PATH. */
function npmCommand() {
  const cli = process.env.npm_execpath;
  if (cli && /\.[cm]?js$/.test(cli) && existsSync(cli)) return { command: process.execPath, prefix: [cli] };
  return { command: "npm", prefix: [] };
}

/** Runs npm to its end; resolves with its exit code (or a description of why it did not run) and the tail of its output. */
function runNpm(resources, name, args, cwd) {
  const { command, prefix } = npmCommand();
  return new Promise((resolve) => {
    const child = resources.spawn(`npm install ${name}`, command, [...prefix, ...args], {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
      // The bench runs under `npm run`, which describes this repository in the environment (its package, its
      // workspaces): none of that applies to the install into the cache. Registry and proxy settings stay.
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !PROJECT_ENV.test(k))),
    });
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (d) => {
      out = (out + d).slice(-4_000);
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), INSTALL_TIMEOUT_MS);
    child.once("error", (err) => {
      clearTimeout(timer);
      resolve({ code: null, why: `cannot run npm: ${err.message}`, output: "" });
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      const why =
        code === 0
          ? undefined
          : signal === "SIGKILL"
            ? `npm did not finish within ${INSTALL_TIMEOUT_MS / 1000} s`
            : `npm exited ${code ?? signal}`;
      resolve({ code, why, output: `${out}${child.tail()}`.trim().slice(-1_500) });
    });
  });
}

/** The lines of npm's output that say what went wrong (not its stack), as " (line; line)", or "". */
function npmErrors(output) {
  const lines = output
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => /^npm (error|ERR!)/.test(l))
    .map((l) => l.replace(/^npm (error|ERR!)\s*/, ""))
    .filter((l) => l && !/^(at |\{|\}|[a-z]+: |syscall |errno )/.test(l) && !/complete log/.test(l))
    .slice(0, 2);
  return lines.length ? ` (${lines.join("; ")})` : "";
}

/** `@modelcontextprotocol/*` packages under `nodeModules`, as "name version" (what MCP SDK a peer runs). */
function mcpPackages(nodeModules) {
  const found = new Map();
  const walk = (dir, depth) => {
    if (depth > 6 || !existsSync(dir)) return;
    for (const entry of readdirSync(dir)) {
      if (entry === "@modelcontextprotocol") {
        for (const pkg of readdirSync(join(dir, entry))) {
          try {
            const v = readJson(join(dir, entry, pkg, "package.json")).version;
            found.set(`@modelcontextprotocol/${pkg} ${v}`, true);
          } catch {}
          walk(join(dir, entry, pkg, "node_modules"), depth + 1);
        }
      } else if (entry.startsWith("@")) {
        for (const pkg of readdirSync(join(dir, entry))) walk(join(dir, entry, pkg, "node_modules"), depth + 1);
      } else if (!entry.startsWith(".")) walk(join(dir, entry, "node_modules"), depth + 1);
    }
  };
  walk(nodeModules, 0);
  return [...found.keys()].sort();
}

/** Checks an install in `dir`; returns {version, bin, sdk} or throws saying what is wrong. */
function inspect(dir, name, version) {
  const pkgDir = join(dir, "node_modules", name);
  const manifest = readJson(join(pkgDir, "package.json"));
  if (manifest.version !== version) throw new Error(`${name} ${manifest.version} is installed, ${version} was asked for`);
  const bin = typeof manifest.bin === "string" ? manifest.bin : manifest.bin?.[name];
  if (!bin) throw new Error(`${name}'s package.json names no "${name}" command`);
  const binPath = join(pkgDir, bin);
  if (!existsSync(binPath)) throw new Error(`${name}'s command ${bin} is missing from the install`);
  return { version, bin: binPath, sdk: mcpPackages(join(dir, "node_modules")) };
}

/**
 * Makes sure one peer is in the cache.
 * @returns {name, version, bin, sdk, cached} or {name, version, skipped: reason}
 */
export async function installPeer(resources, name, log) {
  const version = PEER_VERSIONS[name];
  const dir = join(PEERS_DIR, `${name}@${version}`);
  if (existsSync(join(dir, MARKER))) {
    try {
      return { name, ...inspect(dir, name, version), cached: true };
    } catch (err) {
      log(`  ${name}@${version}: the cached install is broken (${err.message}); installing again`);
    }
  }
  removeDir(dir);
  mkdirSync(dir, { recursive: true });
  log(`  installing ${name}@${version} into ${dir.slice(ROOT.length + 1)}...`);
  const t0 = Date.now();
  const res = await runNpm(
    resources,
    name,
    ["install", "--prefix", dir, "--no-save", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error", `${name}@${version}`],
    dir,
  );
  if (res.why) {
    removeDir(dir);
    return { name, version, skipped: `cannot be installed: ${res.why}${npmErrors(res.output)}` };
  }
  try {
    const found = inspect(dir, name, version);
    writeFileSync(join(dir, MARKER), `${JSON.stringify({ name, version, installedAt: new Date().toISOString() })}\n`);
    log(`  installed ${name}@${version} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return { name, ...found, cached: false };
  } catch (err) {
    removeDir(dir);
    return { name, version, skipped: `the install is unusable: ${err.message}` };
  }
}
