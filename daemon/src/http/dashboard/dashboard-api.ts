import {
  LATEST_PROTOCOL_VERSION,
  McpdAuthStart,
  McpdAuthWait,
  McpdDisable,
  McpdEnable,
  McpdLogs,
  McpdPrompts,
  McpdReload,
  McpdResources,
  McpdRestart,
  McpdSelect,
  McpdTools,
  type JsonObject,
} from "@mcpd/protocol";
import { RUNTIME_DEFAULTS } from "../../defaults.js";
import type { Router } from "../../router/router.js";
import { VERSION } from "../../version.js";
import { InProcessClient } from "./in-process-client.js";

/** What the dashboard's actions and reads ask of the daemon: its control connection's `request`. */
export type Ask = (method: string, params?: JsonObject) => Promise<JsonObject>;

/** An answer of the dashboard's API: the result, or the error's message (as the page shows it). */
export type ApiAnswer = { ok: true; result: JsonObject } | { ok: false; error: string };

const answer = (p: Promise<JsonObject>): Promise<ApiAnswer> =>
  p.then(
    (result): ApiAnswer => ({ ok: true, result }),
    (err: Error): ApiAnswer => ({ ok: false, error: err.message }),
  );

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** The actions the page may run, and the control method each is. */
const ACTIONS: Record<string, { method: string; needsServer: boolean }> = {
  restart: { method: McpdRestart.method, needsServer: false },
  enable: { method: McpdEnable.method, needsServer: true },
  disable: { method: McpdDisable.method, needsServer: true },
  reload: { method: McpdReload.method, needsServer: false },
  authorize: { method: McpdAuthStart.method, needsServer: true },
};

/** Runs action `{action, server?}` through the control handlers, as `mcpd restart` and the others do. */
export function runAction(ask: Ask, body: JsonObject): Promise<ApiAnswer> {
  const action = str(body.action);
  const spec = action === undefined ? undefined : ACTIONS[action];
  if (spec === undefined || !Object.hasOwn(ACTIONS, action as string)) {
    return Promise.resolve({ ok: false, error: `unknown action (one of: ${Object.keys(ACTIONS).join(", ")})` });
  }
  const server = str(body.server);
  if (spec.needsServer && server === undefined) return Promise.resolve({ ok: false, error: `${action} needs a server` });
  const params = action === "reload" || server === undefined ? {} : { server };
  const started = answer(ask(spec.method, params));
  // `mcpd auth`'s flow: the answer holds the URL the user opens; the wait for the browser's return (and
  // the server's restart with its tokens) goes on here, and the live stream shows the server's new state.
  if (action === "authorize") {
    void started.then(async (r) => {
      if (r.ok) await ask(McpdAuthWait.method, { server: server as string }).catch(() => undefined);
    });
  }
  return started;
}

/**
 * One server's page: its tools (each with `profiles`, the configured profiles that select it), prompts,
 * resources and stderr tail, each an answer of its own.
 */
export async function serverDetail(ask: Ask, server: string, profiles: readonly string[]): Promise<Record<string, ApiAnswer>> {
  const [tools, prompts, resources, stderr] = await Promise.all([
    toolsWithProfiles(ask, server, profiles),
    answer(ask(McpdPrompts.method, { server })),
    answer(ask(McpdResources.method, { server })),
    answer(ask(McpdLogs.method, { server, lines: RUNTIME_DEFAULTS.dashboardLogLines })),
  ]);
  return { tools, prompts, resources, stderr };
}

/** A server's tools, each marked with the profiles whose selection lets it through (`mcpd/tools` per profile). */
async function toolsWithProfiles(ask: Ask, server: string, profiles: readonly string[]): Promise<ApiAnswer> {
  const all = await answer(ask(McpdTools.method, { server }));
  if (!all.ok) return all;
  const selected = await Promise.all(
    profiles.map(async (profile) => {
      const r = await answer(ask(McpdTools.method, { server, profile }));
      const names = r.ok ? (r.result.tools as JsonObject[]).map((t) => t.name) : [];
      return { profile, names: new Set(names) };
    }),
  );
  const tools = (all.result.tools as JsonObject[]).map((t) => ({
    ...t,
    profiles: selected.filter((p) => p.names.has(t.name)).map((p) => p.profile),
  }));
  return { ok: true, result: { tools } };
}

/**
 * "Try a tool": calls `{server, tool, arguments}` through mcpd like any agent, over a session of its own
 * in the server's view (select, initialize, `tools/call`), ended after the answer.
 */
export async function callTool(router: Router, body: JsonObject): Promise<ApiAnswer> {
  const server = str(body.server);
  const tool = str(body.tool);
  if (server === undefined || tool === undefined) return { ok: false, error: "give a server and a tool" };
  const args = body.arguments;
  if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
    return { ok: false, error: "arguments must be an object" };
  }
  const client = new InProcessClient(router);
  try {
    return await answer(
      (async () => {
        await client.request(McpdSelect.method, { server });
        await client.request("initialize", {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "mcpd-dashboard", version: VERSION },
        });
        client.notify("notifications/initialized");
        return client.request("tools/call", { name: tool, arguments: (args ?? {}) as JsonObject });
      })(),
    );
  } finally {
    await client.close();
  }
}
