/**
 * The control protocol's declarations type both sides: the compiler rejects a daemon handler table that
 * misses a method, adds one, or answers the wrong shape, a declaration whose fields do not match its
 * type, and a client call with the wrong params or expecting the wrong result. Proved by compiling small
 * programs against the built @mcpd/protocol and @mcpd/client with the real `tsc`: every line marked
 * `// error` must fail, every other line must compile.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TSC = path.join(ROOT, "node_modules/typescript/bin/tsc");

const HEADER = `import {
  CONTROL_METHODS, McpdEnable, McpdRestart, McpdStatus, McpdTools, controlMethod,
  type ControlHandler, type ControlHandlers, type ServerStateResult,
} from "@mcpd/protocol";
import type { McpdClient } from "@mcpd/client";
declare const client: McpdClient;
const stub = { params: () => ({}) as never, handle: async () => ({}) as never };
void CONTROL_METHODS;
`;

/** Programs by file name; each line ending in `// error` must have a compile error, no other line may. */
const PROGRAMS: Record<string, string> = {
  "client-calls.mts": `
export async function calls(): Promise<void> {
  const server: string = (await client.control(McpdTools)).tools[0]!.server;
  const restarted: string[] = (await client.control(McpdRestart, { server: "a" })).restarted;
  await client.control(McpdRestart);
  const s = await client.control(McpdStatus);
  if (!s.restricted) { const socket: string = s.daemon.socketPath; void socket; }
  const pid: number = s.daemon.pid;
  const named = await client.control<{ x: number }>("mcpd/newer", { a: 1 });
  void [server, restarted, pid, named];
  const wrong: number = (await client.control(McpdTools)).tools; // error
  await client.control(McpdRestart, { server: 1 }); // error
  await client.control(McpdEnable); // error
  const socketPath: string = s.daemon.socketPath; // error
  void [wrong, socketPath];
}
`,
  "handlers.mts": `
const restart: ControlHandlers<null>["mcpd/restart"] = {
  params: () => ({}),
  handle: async () => ({ restarted: ["a"] }),
};
const wrongResult: ControlHandlers<null>["mcpd/restart"] = {
  params: () => ({}),
  handle: async () => ({ restarted: 1 }), // error
};
const wrongParams: ControlHandler<typeof McpdEnable, null> = {
  params: () => ({ server: 1 }), // error
  handle: async ({ server }) => ({ server, state: "ready" }),
};
const wrongState: ControlHandler<typeof McpdEnable, null> = {
  params: () => ({ server: "a" }),
  handle: async ({ server }) => ({ server, state: "sleeping" }), // error
};
const complete: ControlHandlers<null> = {
  "mcpd/status": stub, "mcpd/servers": stub, "mcpd/tools": stub, "mcpd/prompts": stub, "mcpd/resources": stub,
  "mcpd/restart": stub, "mcpd/enable": stub, "mcpd/disable": stub, "mcpd/reload": stub, "mcpd/logs": stub,
  "mcpd/shutdown": stub, "mcpd/authStart": stub, "mcpd/authWait": stub, "mcpd/authLogout": stub,
  "mcpd/httpTokenIssue": stub, "mcpd/httpTokenList": stub, "mcpd/httpTokenRevoke": stub, "mcpd/dashboardLogin": stub,
};
const missing: ControlHandlers<null> = { // error
  "mcpd/status": stub, "mcpd/servers": stub, "mcpd/tools": stub, "mcpd/prompts": stub, "mcpd/resources": stub,
  "mcpd/restart": stub, "mcpd/enable": stub, "mcpd/disable": stub, "mcpd/reload": stub, "mcpd/logs": stub,
};
const extra: ControlHandlers<null> = {
  "mcpd/status": stub, "mcpd/servers": stub, "mcpd/tools": stub, "mcpd/prompts": stub, "mcpd/resources": stub,
  "mcpd/restart": stub, "mcpd/enable": stub, "mcpd/disable": stub, "mcpd/reload": stub, "mcpd/logs": stub,
  "mcpd/shutdown": stub, "mcpd/authStart": stub, "mcpd/authWait": stub, "mcpd/authLogout": stub,
  "mcpd/httpTokenIssue": stub, "mcpd/httpTokenList": stub, "mcpd/httpTokenRevoke": stub, "mcpd/dashboardLogin": stub,
  "mcpd/select": stub, // error
};
void [restart, wrongResult, wrongParams, wrongState, complete, missing, extra];
`,
  "declarations.mts": `
export const good = controlMethod("mcpd/a")<{}, ServerStateResult>({ privileged: true, result: { server: "required", state: "required" } });
export const optionalWrongly = controlMethod("mcpd/b")<{}, ServerStateResult>({ privileged: true, result: { server: "optional", state: "required" } }); // error
export const missingField = controlMethod("mcpd/c")<{}, ServerStateResult>({ privileged: true, result: { server: "required" } }); // error
export const extraField = controlMethod("mcpd/d")<{}, ServerStateResult>({ privileged: true, result: { server: "required", state: "required", x: "required" } }); // error
export const noPrivilege = controlMethod("mcpd/e")<{}, ServerStateResult>({ result: { server: "required", state: "required" } }); // error
`,
};

function tsc(project: string): Promise<string> {
  return new Promise((resolve) => {
    execFile(process.execPath, [TSC, "-p", project], { cwd: ROOT, timeout: 120_000 }, (_err, stdout, stderr) =>
      resolve(`${stdout}${stderr}`),
    );
  });
}

describe("the control protocol's types", () => {
  it("reject a wrong handler table, a wrong declaration and a wrong client call, and accept the right ones", async () => {
    mkdirSync(path.join(ROOT, ".tmp"), { recursive: true });
    const dir = mkdtempSync(path.join(ROOT, ".tmp", "control-types-"));
    try {
      const expected: string[] = [];
      for (const [name, body] of Object.entries(PROGRAMS)) {
        const text = HEADER + body;
        writeFileSync(path.join(dir, name), text);
        for (const [i, line] of text.split("\n").entries()) if (line.trimEnd().endsWith("// error")) expected.push(`${name}:${i + 1}`);
      }
      writeFileSync(
        path.join(dir, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            module: "nodenext",
            moduleResolution: "nodenext",
            target: "es2022",
            lib: ["es2023"],
            types: ["node"],
            noEmit: true,
            skipLibCheck: true,
          },
          files: Object.keys(PROGRAMS),
        }),
      );
      const output = await tsc(path.join(dir, "tsconfig.json"));
      const errors = [...output.matchAll(/([\w-]+\.mts)\((\d+),\d+\): error/g)].map((m) => `${m[1]}:${m[2]}`);
      // An error without a location (a bad option, a file not found) would be a broken check, not a pass.
      expect(output.match(/error TS\d+/g)?.length ?? 0, output).toBe(errors.length);
      expect([...new Set(errors)].sort(), output).toEqual(expected.sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
