import { McpdPrompts, McpdResources, McpdTools, type ControlMethod, type ServerFilter, type ToolsParams } from "@mcpd/protocol/core";
import { printJson, println, type CliContext, type Command } from "../context.js";
import { askDaemon } from "../ask-daemon.js";
import { firstLine, table, truncate } from "../format.js";
import { SELECTION_OPTIONS, selectionOf } from "../selection-options.js";
import { terminalSafe } from "../terminal-text.js";

/** Room left for a description column after the other columns, at least 20 characters. */
function descriptionRoom(ctx: CliContext, rows: string[][]): number {
  const used = rows.reduce(
    (m, r) =>
      Math.max(
        m,
        r.reduce((s, c) => s + c.length + 2, 0),
      ),
    0,
  );
  return Math.max(20, (ctx.stdout.columns ?? 120) - used);
}

/** Fetches one of the listings (`McpdTools`, `McpdPrompts`, `McpdResources`), optionally for one server. */
export async function listing<R>(ctx: CliContext, method: ControlMethod<string, ServerFilter, R>, server: string | undefined): Promise<R> {
  return askDaemon(ctx, method, server === undefined ? undefined : { server });
}

/** `mcpd tools [SERVER]`. */
export const toolsCommand: Command = {
  spec: {
    name: "tools",
    usage: "tools [SERVER] [--profile NAME] [--tools GLOB[,GLOB]] [--json]",
    summary: "List the tools the servers offer, under the names agents see",
    options: {
      ...SELECTION_OPTIONS,
      json: { type: "boolean", description: "Print JSON: [{server, name, exposedName, description, inputSchema}]" },
    },
    minPositionals: 0,
    maxPositionals: 1,
    details: [
      "NAME is the aggregate view's name (`<server>__<tool>`); `mcpd connect SERVER` shows TOOL as is.",
      "Without SERVER: exactly what agents' tools/list gets (lazy servers not started yet are started for it).",
      "With --profile NAME (and/or --tools GLOB[,GLOB]): exactly what an agent connected with them sees.",
    ].join("\n"),
  },
  async run(ctx, { values, positionals }) {
    const params: ToolsParams = { ...selectionOf(values, "tools"), ...(positionals[0] !== undefined ? { server: positionals[0] } : {}) };
    const answer = await askDaemon(ctx, McpdTools, params);
    const tools = answer.tools ?? [];
    // Said (on stderr: stdout stays the table or the JSON) unless it is the default: what agents see instead of these tools.
    const search = answer.toolSearch;
    if (search !== undefined && search.reason !== "off (the default)") {
      const instead = search.on
        ? `agents get search_tools${search.callTool ? " and call_tool" : ""} in place of these tools`
        : "agents get these tools";
      ctx.stderr.write(`Tool search: ${search.reason}; ${instead}.\n`);
    }
    if (values.json) {
      printJson(ctx, tools);
      return 0;
    }
    if (tools.length === 0) {
      const selected = params.profile !== undefined || params.tools !== undefined;
      println(
        ctx,
        selected
          ? "No tools in this selection (its globs match none of the tools offered now: see 'mcpd tools' for every tool)."
          : "No tools (servers still starting, failed or none configured: see 'mcpd status').",
      );
      return 0;
    }
    const shown = terminalSafe(tools);
    const rows = shown.map((t) => [t.exposedName ?? t.name ?? "", t.server, t.name ?? ""]);
    const room = descriptionRoom(ctx, rows);
    println(
      ctx,
      table(
        ["NAME", "SERVER", "TOOL", "DESCRIPTION"],
        shown.map((t, i) => [...(rows[i] as string[]), truncate(firstLine(t.description), room)]),
        ctx.out,
      ),
    );
    return 0;
  },
};

/** `mcpd prompts [SERVER]`. */
export const promptsCommand: Command = {
  spec: {
    name: "prompts",
    usage: "prompts [SERVER] [--json]",
    summary: "List the prompts the servers offer, under the names agents see",
    options: { json: { type: "boolean", description: "Print JSON: [{server, name, exposedName, description, arguments}]" } },
    minPositionals: 0,
    maxPositionals: 1,
  },
  async run(ctx, { values, positionals }) {
    const listed = (await listing(ctx, McpdPrompts, positionals[0])).prompts ?? [];
    if (values.json) {
      printJson(ctx, listed);
      return 0;
    }
    const prompts = terminalSafe(listed);
    if (prompts.length === 0) {
      println(ctx, "No prompts.");
      return 0;
    }
    const rows = prompts.map((p) => {
      const args = Array.isArray(p.arguments) ? (p.arguments as Array<{ name?: string; required?: boolean }>) : [];
      return [p.exposedName ?? p.name ?? "", p.server, args.map((a) => `${a.name ?? "?"}${a.required ? "" : "?"}`).join(",") || "-"];
    });
    const room = descriptionRoom(ctx, rows);
    println(
      ctx,
      table(
        ["NAME", "SERVER", "ARGS", "DESCRIPTION"],
        prompts.map((p, i) => [...(rows[i] as string[]), truncate(firstLine(p.description), room)]),
        ctx.out,
      ),
    );
    return 0;
  },
};

/** `mcpd resources [SERVER]`. */
export const resourcesCommand: Command = {
  spec: {
    name: "resources",
    usage: "resources [SERVER] [--json]",
    summary: "List the resources and resource templates the servers offer",
    options: { json: { type: "boolean", description: "Print JSON: {resources: [...], templates: [...]}" } },
    minPositionals: 0,
    maxPositionals: 1,
  },
  async run(ctx, { values, positionals }) {
    const r = await listing(ctx, McpdResources, positionals[0]);
    if (values.json) {
      printJson(ctx, { resources: r.resources ?? [], templates: r.templates ?? [] });
      return 0;
    }
    const resources = terminalSafe(r.resources ?? []);
    const templates = terminalSafe(r.templates ?? []);
    if (resources.length === 0 && templates.length === 0) {
      println(ctx, "No resources.");
      return 0;
    }
    if (resources.length > 0) {
      println(
        ctx,
        table(
          ["URI", "SERVER", "NAME", "TYPE"],
          resources.map((x) => [String(x.uri ?? ""), x.server, x.name ?? "", String(x.mimeType ?? "-")]),
          ctx.out,
        ),
      );
    }
    if (templates.length > 0) {
      if (resources.length > 0) println(ctx);
      println(
        ctx,
        table(
          ["TEMPLATE", "SERVER", "NAME"],
          templates.map((x) => [String(x.uriTemplate ?? ""), x.server, x.name ?? ""]),
          ctx.out,
        ),
      );
    }
    return 0;
  },
};
