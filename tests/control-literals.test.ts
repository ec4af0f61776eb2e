/**
 * The control protocol's names are written once, in its declarations (protocol/src/control/): no other
 * source file of any package spells a control method, mcpd's own notification or the `_meta` server key
 * as a string. A string (or template) that begins with `mcpd/` or `notifications/mcpd/` anywhere else is
 * a violation; comments, and text that mentions a method in passing, are not. Found through a real
 * TypeScript parse, and proved to fail on synthetic bad code before it passes on the real tree.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseSync } from "vite";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PACKAGES = ["protocol", "transports", "client-sdk", "daemon"];

/** The files that declare the names (root-relative, posix). */
const DECLARATIONS = new Set(["protocol/src/control/control-methods.ts", "protocol/src/control/control-method.ts"]);

const NAME = /^(notifications\/)?mcpd\//;

interface AstNode {
  type: string;
  [key: string]: unknown;
}

const isNode = (v: unknown): v is AstNode => typeof v === "object" && v !== null && typeof (v as { type?: unknown }).type === "string";

/** `line:column text` of every string or template in `code` that begins with a control protocol name. */
export function controlNameLiterals(file: string, code: string): string[] {
  const parsed = parseSync(file, code, { lang: "ts", sourceType: "module" });
  if (parsed.errors.length > 0) return parsed.errors.map((e) => `parse error: ${e.message}`);
  const found: Array<{ at: number; text: string }> = [];
  const visit = (node: AstNode): void => {
    if (node.type === "Literal" && typeof node.value === "string" && NAME.test(node.value)) {
      found.push({ at: node.start as number, text: node.value });
    } else if (node.type === "TemplateLiteral") {
      const first = (node.quasis as Array<{ value: { cooked: string | null } }>)[0]?.value.cooked ?? "";
      if (NAME.test(first)) found.push({ at: node.start as number, text: `\`${first}...\`` });
    }
    for (const child of Object.values(node)) {
      if (Array.isArray(child)) {
        for (const item of child) if (isNode(item)) visit(item);
      } else if (isNode(child)) visit(child);
    }
  };
  visit(parsed.program as unknown as AstNode);
  return found.map(({ at, text }) => {
    const before = code.slice(0, at).split("\n");
    return `${before.length}:${(before.at(-1)?.length ?? 0) + 1} ${text}`;
  });
}

describe("controlNameLiterals", () => {
  it("finds a method name in a case, a call, an object key, a template and a notification, and nothing in comments or passing text", () => {
    const code = [
      `// "mcpd/status" in a comment`,
      `/** Calls \`mcpd/tools\`. */`,
      `switch (m) { case "mcpd/status": break; }`,
      `client.request('mcpd/restart', {});`,
      `const meta = { "mcpd/server": s };`,
      "const t = `mcpd/select ${x}`;",
      `send({ method: "notifications/mcpd/serverState" });`,
      `const ok = "see _meta[\\"mcpd/server\\"] and mcpd/select";`,
      `const pkg = "@mcpd/protocol";`,
    ].join("\n");
    expect(controlNameLiterals("x.ts", code)).toEqual([
      `3:19 mcpd/status`,
      `4:16 mcpd/restart`,
      `5:16 mcpd/server`,
      "6:11 `mcpd/select ...`",
      `7:16 notifications/mcpd/serverState`,
    ]);
  });
});

describe("control protocol names", () => {
  it("no source file spells an mcpd/* method, the serverState notification or the _meta server key outside the declarations", () => {
    const violations: string[] = [];
    let declarationsSeen = 0;
    for (const pkg of PACKAGES) {
      for (const rel of readdirSync(path.join(ROOT, pkg, "src"), { recursive: true, encoding: "utf8" })) {
        if (!rel.endsWith(".ts")) continue;
        const file = `${pkg}/src/${rel.split(path.sep).join("/")}`;
        const found = controlNameLiterals(file, readFileSync(path.join(ROOT, file), "utf8"));
        if (DECLARATIONS.has(file)) {
          declarationsSeen++;
          expect(found.length, `${file} declares the names`).toBeGreaterThan(0);
        } else {
          violations.push(...found.map((f) => `${file}:${f}`));
        }
      }
    }
    expect(declarationsSeen).toBe(DECLARATIONS.size);
    expect(violations, "use the declaration from @mcpd/protocol (McpdStatus.method, MCPD_SERVER_META, ...)").toEqual([]);
  });
});
