/**
 * Reading the workspace's sources for the tests that check its shape (layering.test.ts,
 * import-cycles.test.ts, test-hygiene.test.ts, file-sizes.test.ts, function-sizes.test.ts): every package's manifest and `src/` files, the test code,
 * and the module references in a file, found through a real TypeScript parse (comments and strings that
 * look like imports are not imports).
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseSync } from "vite";

/** Node-only globals (the protocol layer must not touch them: it runs anywhere a JS engine does). */
const NODE_GLOBALS = new Set(["process", "Buffer", "__dirname", "__filename", "require", "module", "global", "setImmediate", "NodeJS"]);

export interface Manifest {
  /** Directory relative to the repository root, posix separators: `protocol`, `client-sdk`. */
  dir: string;
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  /** The package's entry points (`.`, `./core`) and what each resolves to. */
  exports?: Record<string, unknown>;
}

export interface ImportRef {
  specifier: string | null;
  typeOnly: boolean;
  kind: string;
}

interface AstNode {
  type: string;
  [key: string]: unknown;
}

function isNode(value: unknown): value is AstNode {
  return typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";
}

/** The string a specifier node stands for, or null when it is computed at run time. */
function literal(node: unknown): string | null {
  if (!isNode(node)) return null;
  if (node.type === "Literal" && typeof node.value === "string") return node.value;
  if (node.type === "TemplateLiteral" && Array.isArray(node.expressions) && node.expressions.length === 0) {
    const quasi = (node.quasis as Array<{ value: { cooked: string | null } }>)[0];
    return quasi?.value.cooked ?? null;
  }
  return null;
}

/** Whether the identifier at `key` of `parent` is a name (property, key, label), not a reference. */
function isNamePosition(parent: AstNode | undefined, key: string): boolean {
  if (!parent) return false;
  if (key === "property" && parent.type === "MemberExpression") return parent.computed !== true;
  if (key === "key") return parent.computed !== true;
  if (key === "right" && parent.type === "TSQualifiedName") return true;
  return key === "label" || key === "imported" || key === "exported";
}

/** Every module reference in one source file, found through a real TypeScript parse. */
export function findImports(file: string, code: string): { imports: ImportRef[]; nodeGlobals: string[]; errors: string[] } {
  const lang = file.endsWith(".tsx") ? "tsx" : "ts";
  const parsed = parseSync(file, code, { lang, sourceType: "module" });
  const imports: ImportRef[] = [];
  const nodeGlobals: string[] = [];
  const visit = (node: AstNode, parent: AstNode | undefined, key: string): void => {
    switch (node.type) {
      case "ImportDeclaration":
        imports.push({ specifier: literal(node.source), typeOnly: node.importKind === "type", kind: "import" });
        break;
      case "ExportAllDeclaration":
      case "ExportNamedDeclaration":
        if (node.source) imports.push({ specifier: literal(node.source), typeOnly: node.exportKind === "type", kind: "export from" });
        break;
      case "ImportExpression":
        imports.push({ specifier: literal(node.source), typeOnly: false, kind: "import()" });
        break;
      case "TSImportType":
        imports.push({ specifier: literal(node.source ?? node.argument), typeOnly: true, kind: "import() type" });
        break;
      case "TSExternalModuleReference":
        imports.push({ specifier: literal(node.expression), typeOnly: false, kind: "import = require()" });
        break;
      case "CallExpression": {
        const callee = node.callee as AstNode;
        const isRequire =
          (callee.type === "Identifier" && callee.name === "require") ||
          (callee.type === "MemberExpression" &&
            isNode(callee.object) &&
            isNode(callee.property) &&
            ((callee.object.name === "require" && callee.property.name === "resolve") ||
              (callee.object.name === "module" && callee.property.name === "require")));
        if (isRequire) imports.push({ specifier: literal((node.arguments as unknown[])[0]), typeOnly: false, kind: "require()" });
        break;
      }
      case "Identifier":
        if (NODE_GLOBALS.has(node.name as string) && !isNamePosition(parent, key)) nodeGlobals.push(node.name as string);
        break;
    }
    for (const [childKey, child] of Object.entries(node)) {
      if (Array.isArray(child)) {
        for (const item of child) if (isNode(item)) visit(item, node, childKey);
      } else if (isNode(child)) {
        visit(child, node, childKey);
      }
    }
  };
  visit(parsed.program as unknown as AstNode, undefined, "");
  return { imports, nodeGlobals, errors: parsed.errors.map((e) => e.message) };
}

/** The repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

function readJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
}

/** Every workspace package's manifest, and the text of every source file under its `src/` (root-relative posix paths). */
export function loadWorkspace(): { manifests: Manifest[]; files: Map<string, string> } {
  const workspaces = readJson(path.join(ROOT, "package.json")).workspaces as string[];
  const manifests: Manifest[] = [];
  const files = new Map<string, string>();
  for (const dir of workspaces) {
    manifests.push({ ...(readJson(path.join(ROOT, dir, "package.json")) as unknown as Manifest), dir });
    let entries: string[] = [];
    try {
      entries = readdirSync(path.join(ROOT, dir, "src"), { recursive: true, encoding: "utf8" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    for (const rel of entries) {
      if (!/\.(m|c)?tsx?$/.test(rel)) continue;
      const file = `${dir}/src/${rel.split(path.sep).join("/")}`;
      files.set(file, readFileSync(path.join(ROOT, file), "utf8"));
    }
  }
  return { manifests, files };
}

/** Directories of test code: each package's `test/` and the cross-package `tests/`. */
const TEST_ROOTS = ["protocol/test", "transports/test", "daemon/test", "client-sdk/test", "tests"];
/**
 * Not test code: benchmarks and the soak run (they measure over time, outside `npm test`), and fixtures
 * (servers and probes that tests start: their slowness is the behaviour a test asks for).
 */
const NOT_TEST_CODE = /(^|\/)(node_modules|dist|fixtures)\/|^tests\/(bench|soak)\//;

/** The text of every test file and test helper (root-relative posix paths): TypeScript and JavaScript. */
export function loadTestSources(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const file = `${dir}/${entry.name}`;
      if (NOT_TEST_CODE.test(`${file}/`)) continue;
      if (entry.isDirectory()) walk(file);
      else if (entry.isFile() && /\.(m|c)?(t|j)sx?$/.test(file) && !/\.d\.(m|c)?ts$/.test(file)) {
        files.set(file, readFileSync(path.join(ROOT, file), "utf8"));
      }
    }
  };
  for (const dir of TEST_ROOTS) walk(dir);
  return files;
}
