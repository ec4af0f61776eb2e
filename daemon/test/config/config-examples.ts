/**
 * Every config the repository shows or ships: the ```json / ```jsonc blocks of README.md and docs/*.md
 * that are configs (an object with `mcpServers`, `servers` or `mcpd`), examples/config.json and the
 * client configs the import tests read (tests/cli/fixtures). Each with what mcpd makes of it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseConfig } from "../../src/config/parse-config.js";
import { parseJsonc } from "../../src/config/parse-jsonc.js";

export const REPO = fileURLToPath(new URL("../../../", import.meta.url));

/** One config example: where it is, its text and the value it parses to. */
export interface ConfigExample {
  id: string;
  text: string;
  value: Record<string, unknown>;
}

const CONFIG_KEYS = ["mcpServers", "servers", "mcpd"];

function isConfig(value: unknown): value is Record<string, unknown> {
  if (!isObject(value) || !CONFIG_KEYS.some((k) => Object.hasOwn(value, k))) return false;
  // `mcpd status --json` has a "servers" array: output, not a config.
  return ["mcpServers", "servers"].every((k) => value[k] === undefined || isObject(value[k]));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A template rather than a config: a placeholder stands where a server's name goes (`"<name>"`). */
function isTemplate(value: Record<string, unknown>): boolean {
  return ["mcpServers", "servers"].some((k) => Object.keys((value[k] as object | undefined) ?? {}).some((n) => n.startsWith("<")));
}

function parsed(text: string): unknown {
  try {
    return parseJsonc(text, "/example.json").value;
  } catch {
    return undefined;
  }
}

/** The config blocks of one Markdown file. */
function markdownExamples(file: string): ConfigExample[] {
  const out: ConfigExample[] = [];
  const text = readFileSync(file, "utf8");
  const fence = /^```(json|jsonc)\n([\s\S]*?)^```$/gm;
  for (const match of text.matchAll(fence)) {
    const value = parsed(match[2] as string);
    if (!isConfig(value) || isTemplate(value)) continue;
    // Numbered, not placed by line: an edit above an example does not rename it.
    out.push({ id: `${relative(REPO, file)}#${out.length + 1}`, text: match[2] as string, value });
  }
  return out;
}

/** Every example, in a fixed order. */
export function configExamples(): ConfigExample[] {
  const docs = readdirSync(join(REPO, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => join(REPO, "docs", f));
  const files = [
    "examples/config.json",
    "tests/cli/fixtures/home/.config/Claude/claude_desktop_config.json",
    "tests/cli/fixtures/home/.cursor/mcp.json",
    "tests/cli/fixtures/project/.mcp.json",
    "tests/cli/fixtures/project/.cursor/mcp.json",
    "tests/cli/fixtures/project/.vscode/mcp.json",
    "tests/cli/fixtures/import-vars/.mcp.json",
  ];
  const whole = files.flatMap((f) => {
    const text = readFileSync(join(REPO, f), "utf8");
    const value = parsed(text);
    return isConfig(value) ? [{ id: f, text, value }] : [];
  });
  return [...[join(REPO, "README.md"), ...docs].flatMap(markdownExamples), ...whole];
}

/** The file every example is loaded as, and its environment (no variable set: each `${VAR}` is deferred). */
const EXAMPLE_FILE = "/cfg/config.json";
const EXAMPLE_ENV = { HOME: "/home/ann" };

/** What mcpd makes of an example: its servers, settings and warnings, or the error refusing it. */
export function loadExample(example: ConfigExample): unknown {
  try {
    const c = parseConfig(example.text, EXAMPLE_FILE, EXAMPLE_ENV, { unsetVariables: "defer" });
    return { servers: c.servers, settings: c.settings, warnings: c.warnings };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
