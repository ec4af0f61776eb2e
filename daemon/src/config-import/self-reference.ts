import { basename } from "node:path";
import { redactUrl } from "../secrets/index.js";
import { httpPortFromEnv } from "../config/http-settings.js";
import { CONFIG_DEFAULTS } from "../defaults.js";
import type { ServerEntry } from "./import-types.js";

/** Why an entry that reaches mcpd itself is not imported (the start of the reason `config import` prints). */
export const SELF_REFERENCE = "points back at mcpd itself; importing it would make mcpd its own server";

/** Where mcpd's own HTTP front end is reachable, as far as the config file and the environment tell. */
export interface McpdEndpoints {
  /** Ports the front end may listen on (never 0: "any port" names none). */
  ports: readonly number[];
  /** Host names that reach it besides the loopback ones: the configured `mcpd.http.host`, lower-cased. */
  hosts: readonly string[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * mcpd's endpoints from its config file's `mcpd` section: `mcpd.http.port` (the default, 7767, when
 * unset) and `MCPD_HTTP_PORT` when set in `env`, which overrides the port of a daemon started with it.
 * A port of 0 (any free port) cannot be known from the file and adds nothing.
 */
export function mcpdEndpoints(mcpdSection: unknown, env: NodeJS.ProcessEnv): McpdEndpoints {
  const http = isRecord(mcpdSection) && isRecord(mcpdSection.http) ? mcpdSection.http : {};
  const filePort = http.port === undefined ? CONFIG_DEFAULTS.http.port : http.port;
  const ports = new Set<number>();
  if (typeof filePort === "number" && Number.isInteger(filePort) && filePort > 0 && filePort <= 65_535) ports.add(filePort);
  const envPort = httpPortFromEnv(env);
  if (envPort !== undefined && envPort > 0) ports.add(envPort);
  const host = typeof http.host === "string" ? http.host.toLowerCase().replace(/^\[(.*)\]$/, "$1") : undefined;
  return { ports: [...ports], hosts: host === undefined ? [] : [host] };
}

/** Whether `hostname` (as `URL.hostname` gives it: IPv6 in brackets) reaches this machine's loopback or any-address. */
function isLocalHost(hostname: string, extra: readonly string[]): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, "");
  const bare = h.replace(/^\[(.*)\]$/, "$1");
  if (extra.includes(bare)) return true;
  // 0.0.0.0 and :: are where a server listens on every address; a client connecting to them reaches this machine.
  return h === "localhost" || bare === "::1" || bare === "::" || h === "0.0.0.0" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The front end's endpoints: `/mcp`, `/sse`, `/servers/<name>/mcp`, `/servers/<name>/sse` (a trailing `/` allowed). */
const FRONT_END_PATH = /^\/(?:servers\/[^/]+\/)?(?:mcp|sse)\/?$/;

/** Whether `text` is a URL of mcpd's own HTTP front end. */
export function isFrontEndUrl(text: string, endpoints: McpdEndpoints): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return false;
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  return endpoints.ports.includes(port) && isLocalHost(url.hostname, endpoints.hosts) && FRONT_END_PATH.test(url.pathname);
}

/** `mcpd`, `mcpd.js`, `mcpd.mjs`, `mcpd.cmd`, `mcpd.exe`: a file name that is mcpd's command. */
const MCPD_FILE = /^mcpd(?:\.(?:js|mjs|cjs|cmd|exe|ps1))?$/i;
/** Package runners whose first word after their options is the package (`npx -y mcpd connect`). */
const RUNNERS = new Set(["npx", "pnpx", "bunx"]);
/** Package managers that run a package with a subcommand (`npm exec mcpd`, `pnpm dlx mcpd`, `yarn dlx mcpd`). */
const MANAGERS = new Set(["npm", "pnpm", "yarn", "bun"]);
const MANAGER_RUN = new Set(["exec", "dlx", "x"]);
/** Runtimes whose first word after their options is the script (`node --no-warnings .../mcpd.js connect`). */
const RUNTIMES = new Set(["node", "nodejs", "bun"]);
/** Runner options that take the next word as their value. */
const VALUE_OPTIONS = new Set(["-p", "--package", "-c", "--call", "-r", "--require", "--import", "--loader"]);

const commandName = (command: string): string => basename(command.replace(/\\/g, "/")).toLowerCase();

/** Skips leading options (and `--`); the index of the first word that is not one. */
function firstWord(args: readonly string[], from = 0): number {
  let i = from;
  while (i < args.length) {
    const a = args[i] as string;
    if (a === "--") return i + 1;
    if (!a.startsWith("-")) return i;
    i += VALUE_OPTIONS.has(a) ? 2 : 1;
  }
  return i;
}

/** Whether an npm package spec names mcpd (`mcpd`, `mcpd@1.2.3`, `@scope/mcpd@latest`). */
function isMcpdPackage(spec: string): boolean {
  const name = spec.replace(/(?!^)@.*$/, "");
  return name === "mcpd" || name.endsWith("/mcpd") || name === "@mcpd/daemon";
}

/** The words after mcpd's command when `command args` runs mcpd; undefined when it runs something else. */
function mcpdArgs(command: string, args: readonly string[]): readonly string[] | undefined {
  const name = commandName(command);
  if (MCPD_FILE.test(name)) return args;
  if (RUNNERS.has(name) || (MANAGERS.has(name) && MANAGER_RUN.has(args[0] ?? ""))) {
    const i = firstWord(args, RUNNERS.has(name) ? 0 : 1);
    return i < args.length && isMcpdPackage(args[i] as string) ? args.slice(i + 1) : undefined;
  }
  if (RUNTIMES.has(name)) {
    const i = firstWord(args);
    return i < args.length && MCPD_FILE.test(commandName(args[i] as string)) ? args.slice(i + 1) : undefined;
  }
  return undefined;
}

/**
 * Why `entry` reaches mcpd itself, or undefined when it does not: a stdio entry that runs `mcpd connect`
 * (by name, by path, through a package runner or `node .../mcpd.js`), or one whose arguments name mcpd's
 * HTTP front end (a bridge such as mcp-remote), or an HTTP/SSE entry whose URL is the front end's. The
 * reason starts with {@link SELF_REFERENCE} and says which part matched (URLs shown redacted).
 */
export function selfReference(entry: ServerEntry, endpoints: McpdEndpoints): string | undefined {
  if (entry.command !== undefined) {
    const args = entry.args ?? [];
    if (mcpdArgs(entry.command, args)?.[0] === "connect") return `${SELF_REFERENCE} (it runs \`mcpd connect\`)`;
    const url = args.find((a) => isFrontEndUrl(a, endpoints));
    if (url !== undefined) return `${SELF_REFERENCE} (its argument ${redactUrl(url)} is mcpd's HTTP front end)`;
    return undefined;
  }
  if (entry.url !== undefined && entry.type !== "ws" && isFrontEndUrl(entry.url, endpoints)) {
    return `${SELF_REFERENCE} (${redactUrl(entry.url)} is mcpd's HTTP front end)`;
  }
  return undefined;
}
