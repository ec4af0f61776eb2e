import { TRANSPORT_TYPE_ALIASES } from "../config/config-names.js";
import { literalGlob } from "../config/globs.js";
import type { FoundServer, ServerEntry, SourceScan } from "./import-types.js";

/** mcpd's server-name rule (kept in step with the config loader's SERVER_NAME_PATTERN). */
const NAME_PATTERN = /^[A-Za-z0-9_-]{1,48}$/;

/** Keys other clients write that carry nothing mcpd needs; dropped without a note. */
const IGNORED_KEYS = new Set(["autoApprove", "alwaysAllow", "description", "dev", "gallery", "version", "timeout"]);

/**
 * How `${...}` references in a client's strings are treated. `env` references (`${VAR}`,
 * `${VAR:-default}`, `${env:VAR}`) are kept: mcpd expands the same syntax. The client's own variables
 * are substituted from `vars` when known, and make the server unusable when not.
 */
export interface VariableRules {
  /** Client variables with known values, e.g. `workspaceFolder`, `userHome`. */
  vars: Record<string, string>;
  /**
   * Whether a bare `${NAME}` is an environment variable (Claude Code, Claude Desktop) or one of the
   * client's own variables (VS Code and Cursor, where environment variables are written `${env:NAME}`).
   */
  bareIsEnv: boolean;
}

/** Makes a client's server name valid for mcpd: other characters become `-`, at most 48 characters. */
export function sanitizeServerName(name: string): string {
  if (NAME_PATTERN.test(name)) return name;
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, "-").slice(0, 48);
  return cleaned === "" ? "server" : cleaned;
}

class Unusable extends Error {}

/** The note on an imported remote server that carries no credentials of its own. */
export const NEEDS_AUTH_NOTE = (name: string): string =>
  `no credentials in its entry: if it uses OAuth (most hosted servers do), authorize mcpd once with \`mcpd auth ${name}\``;

/** Applies {@link VariableRules} to one string. @throws Unusable for an unknown client variable. */
function substitute(value: string, rules: VariableRules, used: Set<string>): string {
  return value.replace(/\$\{([^}]*)\}/g, (whole, inner: string) => {
    if (inner.startsWith("env:")) return whole;
    if (inner.startsWith("input:")) {
      throw new Unusable(`it uses ${whole}, a value only that client can prompt for; add the server by hand with the value or a \${VAR}`);
    }
    const name = /^([A-Za-z_][A-Za-z0-9_]*)(:-.*)?$/s.exec(inner);
    if (name && rules.vars[name[1] as string] !== undefined) {
      used.add(name[1] as string);
      return rules.vars[name[1] as string] as string;
    }
    if (name && rules.bareIsEnv) return whole;
    throw new Unusable(`it uses ${whole}, which mcpd cannot resolve`);
  });
}

function stringRecord(value: unknown, key: string, rules: VariableRules, used: Set<string>): Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Unusable(`"${key}" is not an object`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === "string") out[k] = substitute(v, rules, used);
    else if (typeof v === "number" || typeof v === "boolean") out[k] = String(v);
    else throw new Unusable(`"${key}.${k}" is not a string`);
  }
  return out;
}

/**
 * Converts one entry of a client's server map to mcpd's format.
 * Accepted: `type` (`stdio`, `http`, `sse`, `ws`, and the aliases mcpd's config takes: `streamable-http`,
 * `streamableHttp` and `streamable_http` mean `http`, `websocket` means `ws`),
 * `command`, `args`, `env`, `cwd`, `url` (or Windsurf's `serverUrl`), `headers`, `disabled: true`
 * (becomes `enabled: false`), and `disabledTools` (Windsurf, Roo Code, Kiro and files written for them:
 * the tools switched off, which become a server-level `"tools": {"exclude": [...]}`). Other keys are
 * dropped with a note.
 * Adds the result to `scan.servers`, or the reason it cannot be used to `scan.unusable`.
 */
export function convertEntry(name: string, raw: unknown, origin: string, rules: VariableRules, scan: SourceScan): void {
  const notes: string[] = [];
  const used = new Set<string>();
  const mcpdName = sanitizeServerName(name);
  if (mcpdName !== name) notes.push(`renamed from "${name}" (server names are letters, digits, "_" and "-", at most 48)`);
  try {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Unusable("its entry is not an object");
    const src = raw as Record<string, unknown>;
    const entry: ServerEntry = {};
    const dropped: string[] = [];
    // The type names mcpd's own config accepts (`streamable-http`, `streamable_http`, `websocket`, ...).
    let type: unknown =
      typeof src.type === "string" && Object.hasOwn(TRANSPORT_TYPE_ALIASES, src.type) ? TRANSPORT_TYPE_ALIASES[src.type] : src.type;
    const url = src.url ?? src.serverUrl;
    if (type === undefined) type = typeof src.command === "string" ? "stdio" : url !== undefined ? "http" : undefined;
    if (type !== "stdio" && type !== "http" && type !== "sse" && type !== "ws") {
      throw new Unusable(
        type === undefined ? 'it has neither "command" nor "url"' : `its type ${JSON.stringify(type)} is not one mcpd knows`,
      );
    }
    if (type === "stdio") {
      if (typeof src.command !== "string" || src.command === "") throw new Unusable('it is a stdio server without a "command"');
      entry.command = substitute(src.command, rules, used);
      if (src.args !== undefined) {
        if (!Array.isArray(src.args)) throw new Unusable('"args" is not an array');
        entry.args = src.args.map((a, i) => {
          if (typeof a === "string") return substitute(a, rules, used);
          if (typeof a === "number" || typeof a === "boolean") return String(a);
          throw new Unusable(`"args[${i}]" is not a string`);
        });
      }
      if (src.env !== undefined) entry.env = stringRecord(src.env, "env", rules, used);
      if (src.cwd !== undefined) {
        if (typeof src.cwd !== "string") throw new Unusable('"cwd" is not a string');
        entry.cwd = substitute(src.cwd, rules, used);
      }
      for (const k of ["url", "serverUrl", "headers"]) if (src[k] !== undefined) dropped.push(k);
    } else {
      if (src.type !== undefined || type !== "http") entry.type = type;
      if (typeof url !== "string" || url === "") throw new Unusable(`it is a ${type} server without a "url"`);
      entry.url = substitute(url, rules, used);
      if (src.headers !== undefined) entry.headers = stringRecord(src.headers, "headers", rules, used);
      for (const k of ["command", "args", "env", "cwd"]) if (src[k] !== undefined) dropped.push(k);
      // A URL and nothing else: the client that held it did the OAuth dance itself; mcpd does it once per server.
      if (type !== "ws" && Object.keys(entry.headers ?? {}).length === 0) notes.push(NEEDS_AUTH_NOTE(mcpdName));
    }
    if (src.disabled === true) entry.enabled = false;
    if (src.enabled === false) entry.enabled = false;
    const off = disabledTools(src.disabledTools, notes);
    if (off !== undefined) entry.tools = { exclude: off };
    for (const k of Object.keys(src)) {
      if (["type", "command", "args", "env", "cwd", "url", "serverUrl", "headers", "disabled", "enabled", "disabledTools"].includes(k))
        continue;
      if (k === "envFile") notes.push('"envFile" is not supported: put those variables in "env" (or the daemon\'s environment)');
      else if (!IGNORED_KEYS.has(k)) dropped.push(k);
    }
    if (dropped.length > 0) notes.push(`ignored ${dropped.map((k) => `"${k}"`).join(", ")}`);
    if (used.size > 0) notes.push(`substituted ${[...used].map((v) => `\${${v}}`).join(", ")}`);
    const found: FoundServer = { name: mcpdName, sourceName: name, entry, origin, notes };
    scan.servers.push(found);
  } catch (err) {
    if (!(err instanceof Unusable)) throw err;
    scan.unusable.push({ name, origin, reason: err.message });
  }
}

/**
 * The tool names of a `disabledTools` list as exact globs, with a note saying they were carried over;
 * undefined when there is none. A list that is not an array of names is dropped with a note.
 */
function disabledTools(value: unknown, notes: string[]): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((t) => typeof t !== "string" || t === "")) {
    notes.push('ignored "disabledTools": not a list of tool names');
    return undefined;
  }
  if (value.length === 0) return undefined;
  const globs = [...new Set(value as string[])].map(literalGlob);
  notes.push(`its switched-off tools (${value.length}) became "tools": {"exclude": [...]}: no mcpd client sees them`);
  return globs;
}

/** Converts every entry of a `{ name: entry }` map. A map that is not an object is reported. */
export function convertServerMap(map: unknown, origin: string, rules: VariableRules, scan: SourceScan): void {
  if (map === undefined) return;
  if (typeof map !== "object" || map === null || Array.isArray(map)) {
    scan.warnings.push(`${origin}: the server list is not an object; nothing imported from it`);
    return;
  }
  for (const [name, raw] of Object.entries(map)) convertEntry(name, raw, origin, rules, scan);
}
