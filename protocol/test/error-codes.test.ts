import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { renderErrorTable } from "../scripts/error-docs.mjs";
import { ERROR_CODES, type McpdErrorCode, errorData, isMcpdErrorCode, wireCodeOf } from "../src/error-codes.js";
import { McpdError, fromWireError, toWireError } from "../src/errors.js";
import { WireCode } from "../src/wire-codes.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SOURCES = ["protocol/src", "transports/src", "daemon/src", "client-sdk/src"];

/** Environment variables named `MCPD_*` (docs/configuration.md): not error codes. */
const ENV_NAMES = new Set([
  "MCPD_BIN",
  "MCPD_CONFIG",
  "MCPD_CONFIG_DIR",
  "MCPD_CONNECT_TIMEOUT_MS",
  "MCPD_FOREGROUND_PARENT",
  "MCPD_FOREGROUND_REEXEC",
  "MCPD_HOME",
  "MCPD_HTTP_PORT",
  "MCPD_LOG_LEVEL",
  "MCPD_SOCKET",
  "MCPD_START_TIMEOUT_MS",
]);

function filesUnder(dir: string, ext: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path, ext));
    else if (name.endsWith(ext)) out.push(path);
  }
  return out;
}

/** Every `"MCPD_..."` string literal in the source files, with the file that holds it. */
function codeLiterals(): Array<{ code: string; file: string }> {
  const found: Array<{ code: string; file: string }> = [];
  for (const dir of SOURCES) {
    for (const file of filesUnder(join(ROOT, dir), ".ts")) {
      if (file.endsWith("error-codes.ts")) continue;
      for (const m of readFileSync(file, "utf8").matchAll(/["'`](MCPD_[A-Z_]+)["'`]/g)) found.push({ code: m[1] as string, file });
    }
  }
  return found;
}

describe("ERROR_CODES: the one table of mcpd's error codes", () => {
  it("docs/errors.md holds exactly the table generated from it (run `npm run docs:errors`)", () => {
    const doc = readFileSync(join(ROOT, "docs/errors.md"), "utf8");
    expect(doc).toContain(renderErrorTable(ERROR_CODES, WireCode));
  });

  it("every MCPD_ string in the source is a code of the table or an environment variable", () => {
    const unknown = codeLiterals().filter((l) => !isMcpdErrorCode(l.code) && !ENV_NAMES.has(l.code));
    expect(unknown.map((l) => `${l.code} in ${l.file.slice(ROOT.length)}`)).toEqual([]);
  });

  it("every code of the table is raised somewhere (no dead rows)", () => {
    const used = new Set(codeLiterals().map((l) => l.code));
    expect(Object.keys(ERROR_CODES).filter((c) => !used.has(c))).toEqual([]);
  });

  it("every MCPD_ name the docs mention is a code of the table or an environment variable", () => {
    const names = new Set<string>();
    for (const file of filesUnder(join(ROOT, "docs"), ".md")) {
      for (const m of readFileSync(file, "utf8").matchAll(/\bMCPD_[A-Z_]*[A-Z]\b/g)) names.add(m[0]);
    }
    expect([...names].filter((n) => !isMcpdErrorCode(n) && !ENV_NAMES.has(n))).toEqual([]);
  });

  it("wire codes are declared ones, and each code's McpdError crosses the wire with it", () => {
    const declared = new Set<number>(Object.values(WireCode));
    for (const code of Object.keys(ERROR_CODES) as McpdErrorCode[]) {
      const wire = wireCodeOf(code);
      expect(declared.has(wire), code).toBe(true);
      const err = new McpdError(code, "m");
      expect(err.wireCode).toBe(wire);
      expect(toWireError(err)).toEqual({ code: wire, message: "m", data: { mcpdCode: code } });
      expect(fromWireError(toWireError(err)).code).toBe(code);
    }
  });

  it("errorData puts the stable code last, so extra fields never mask it", () => {
    expect(errorData("MCPD_TOO_MANY_REQUESTS", { mcpdCode: "spoofed", limit: 3 })).toEqual({
      mcpdCode: "MCPD_TOO_MANY_REQUESTS",
      limit: 3,
    });
  });

  it("a code this build does not know (a newer daemon's) survives fromWireError as it came", () => {
    const err = fromWireError({ code: -32077, message: "new", data: { mcpdCode: "MCPD_FROM_THE_FUTURE" } });
    expect(err.code).toBe("MCPD_FROM_THE_FUTURE");
    expect(isMcpdErrorCode(err.code)).toBe(false);
  });
});
