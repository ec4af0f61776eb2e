/**
 * The control protocol against its declarations (@mcpd/protocol CONTROL_METHODS): the daemon answers
 * every declared `mcpd/*` method with the declared shape (every field of the type, nothing more), sends
 * `notifications/mcpd/serverState` as declared, refuses exactly the declarations marked `privileged` on an
 * agent's connection, and knows no `mcpd/*` method that is not declared.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import {
  CONTROL_METHODS,
  McpdHttpTokenIssue,
  McpdHttpTokenRevoke,
  McpdSelect,
  McpdServerStateNotification,
  McpdShutdown,
  type Fields,
  type FieldSpec,
  type Presence,
} from "@mcpd/protocol";
import { fixturePath } from "../helpers/process.js";
import { fixture, startTestDaemon, until, type RawClient, type TestDaemon } from "./harness.js";

let daemon: TestDaemon | undefined;
let oauthServer: ChildProcess | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  if (oauthServer && oauthServer.exitCode === null && oauthServer.signalCode === null) {
    const gone = new Promise((resolve) => oauthServer?.once("exit", resolve));
    oauthServer.kill("SIGKILL");
    await gone;
  }
  oauthServer = undefined;
});

/** Starts the OAuth-protected MCP fixture (tests/fixtures/servers/oauth-mcp.mjs); resolves with its MCP URL. */
async function startOAuthServer(): Promise<string> {
  const child = spawn(process.execPath, [fixturePath("oauth-mcp.mjs")], { stdio: ["ignore", "pipe", "inherit"] });
  oauthServer = child;
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`oauth fixture exited with ${code}`)));
  });
  return (JSON.parse(line) as { url: string }).url;
}

/**
 * Where `value` differs from `fields`: a required field missing, a field the declaration lacks, and the
 * same inside nested objects and each element of nested arrays. Empty when it matches.
 */
function shapeProblems(value: unknown, fields: Fields<unknown> | Record<string, FieldSpec<unknown, Presence>>, at = "result"): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${at}: not an object (${JSON.stringify(value)})`];
  const spec = fields as Record<string, FieldSpec<unknown, Presence>>;
  const problems: string[] = [];
  for (const key of Object.keys(value)) if (!(key in spec)) problems.push(`${at}.${key}: not declared`);
  for (const [key, field] of Object.entries(spec)) {
    const v = (value as Record<string, unknown>)[key];
    const presence = typeof field === "string" ? field : field.presence;
    if (v === undefined) {
      if (presence === "required") problems.push(`${at}.${key}: missing`);
      continue;
    }
    if (typeof field === "string" || v === null) continue;
    const nested = field.fields as Record<string, FieldSpec<unknown, Presence>>;
    if (Array.isArray(v)) for (const [i, item] of v.entries()) problems.push(...shapeProblems(item, nested, `${at}.${key}[${i}]`));
    else problems.push(...shapeProblems(v, nested, `${at}.${key}`));
  }
  return problems;
}

describe("shapeProblems (the check the tests below rely on)", () => {
  const fields = { a: "required", b: "optional", c: { presence: "required", fields: { x: "required" } } } as const;
  it("accepts a matching value and reports a missing, an undeclared and a nested wrong field", () => {
    expect(shapeProblems({ a: 1, c: [{ x: 1 }, { x: 2 }] }, fields)).toEqual([]);
    expect(shapeProblems({ a: 1, b: null, c: { x: null } }, fields)).toEqual([]);
    expect(shapeProblems({ b: 1, c: [{ x: 1 }, { y: 2 }], d: 0 }, fields)).toEqual([
      "result.d: not declared",
      "result.a: missing",
      "result.c[1].y: not declared",
      "result.c[1].x: missing",
    ]);
  });
});

/** Params for each declared method that work on a control connection against server `fx` (OAuth: `oauthy`). */
const PARAMS: Record<string, object | undefined> = {
  "mcpd/select": { control: true, events: true },
  "mcpd/status": undefined,
  "mcpd/servers": undefined,
  "mcpd/tools": {},
  "mcpd/prompts": { server: "fx" },
  "mcpd/resources": {},
  "mcpd/restart": { server: "fx" },
  "mcpd/disable": { server: "fx" },
  "mcpd/enable": { server: "fx" },
  "mcpd/reload": undefined,
  "mcpd/logs": { server: "fx", lines: 5 },
  "mcpd/shutdown": undefined,
  "mcpd/authStart": { server: "oauthy" },
  "mcpd/authWait": { server: "oauthy" },
  "mcpd/authLogout": { server: "oauthy" },
  "mcpd/httpTokenIssue": { server: "fx" },
  "mcpd/httpTokenList": undefined,
  // The id of the token mcpd/httpTokenIssue answered, before this is sent (see below).
  "mcpd/httpTokenRevoke": { id: "000000000000" },
  "mcpd/dashboardLogin": undefined,
};

const FORBIDDEN = -32071;
const METHOD_NOT_FOUND = -32601;

describe("the control protocol as declared", () => {
  it("answers every declared method with its declared shape on a control connection, and the state notification as declared", async () => {
    expect(Object.keys(PARAMS).sort(), "a params entry per declaration").toEqual(CONTROL_METHODS.map((d) => d.method).sort());
    const url = await startOAuthServer();
    daemon = await startTestDaemon({ fx: fixture("fx", ["--resource", "file:///a.txt"]), oauthy: { type: "http", url } });
    const d = daemon;
    const c: RawClient = await d.raw();
    let issuedId = "";
    // mcpd/select must be the first message; mcpd/shutdown comes last.
    const order = [McpdSelect, ...CONTROL_METHODS.filter((m) => m !== McpdSelect && m !== McpdShutdown), McpdShutdown];
    expect(order.length).toBe(CONTROL_METHODS.length);
    for (const decl of order) {
      if (decl.method === "mcpd/status" || decl.method === "mcpd/servers") {
        // Wait for the server, so the status shows a running one (pid, mode, latency).
        await until(async () => (await c.request("mcpd/servers")).result?.servers?.[0]?.state === "ready", "fx ready", 30_000);
      }
      const params = decl === McpdHttpTokenRevoke ? { id: issuedId } : PARAMS[decl.method];
      const r = await c.request(decl.method, params);
      expect(r.error, `${decl.method}: ${JSON.stringify(r.error)}`).toBeUndefined();
      if (decl === McpdHttpTokenIssue) issuedId = r.result.id;
      expect(shapeProblems(r.result, decl.result), `${decl.method} answered ${JSON.stringify(r.result)}`).toEqual([]);
      if (decl.method === "mcpd/status") {
        expect(r.result.restricted).toBeUndefined();
        expect(r.result.servers.length).toBe(2);
      }
      // The browser's part of the authorization: the fixture approves at once and redirects to the daemon.
      if (decl.method === "mcpd/authStart") expect((await fetch(r.result.url, { redirect: "follow" })).status).toBe(200);
    }
    const notes = c.messages.filter((m) => m.method === McpdServerStateNotification.method);
    expect(notes.length).toBeGreaterThan(0);
    for (const n of notes) expect(shapeProblems(n.params, McpdServerStateNotification.params, "params")).toEqual([]);
    await until(() => d.proc.exitCode !== null || d.proc.signalCode !== null, "daemon exit after mcpd/shutdown", 30_000);
  });

  it("an agent's connection is refused exactly the declarations marked privileged, and gets the restricted status", async () => {
    daemon = await startTestDaemon({ fx: fixture("fx") });
    const agent = await daemon.raw();
    await agent.initialize();
    for (const decl of CONTROL_METHODS) {
      if (decl === McpdSelect) continue; // answered by the session, before initialize: not a question of privilege
      const r = await agent.request(decl.method, PARAMS[decl.method]);
      if (decl.privileged) {
        expect(r.error?.code, `${decl.method}: ${JSON.stringify(r)}`).toBe(FORBIDDEN);
        expect(r.error.data?.mcpdCode).toBe("MCPD_FORBIDDEN");
      } else {
        expect(r.error, `${decl.method}: ${JSON.stringify(r.error)}`).toBeUndefined();
        expect(shapeProblems(r.result, decl.result), `${decl.method} answered ${JSON.stringify(r.result)}`).toEqual([]);
      }
      if (decl.method === "mcpd/status") {
        expect(r.result.restricted).toBe(true);
        expect(Object.keys(r.result.daemon).sort()).toEqual(["pid", "startedAt", "uptimeMs", "version"]);
      }
    }
    // Still alive: the refused shutdown did nothing.
    expect((await agent.request("ping")).result).toEqual({});
  });

  it("an mcpd/* method that is not declared is not found, on a control connection too", async () => {
    daemon = await startTestDaemon({});
    const c = await daemon.control();
    const r = await c.request("mcpd/nonesuch", {});
    expect(r.error?.code).toBe(METHOD_NOT_FOUND);
    expect(r.error.message).toContain("mcpd/nonesuch");
  });
});
