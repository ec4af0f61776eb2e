import { resolvePaths } from "@mcpd/client/paths";
import { McpdError } from "@mcpd/protocol/core";
import { CliError, stringOption, UsageError } from "../args.js";
import { println, type CliContext, type Command } from "../context.js";
import { table } from "../format.js";
import { importConfig, type ImportReport } from "../../config-import/import-config.js";
import { displayEntry } from "../../config-import/display-entry.js";
import { IMPORT_SOURCES, WHOLE_ENVIRONMENT_SOURCES, type ImportSource } from "../../config-import/import-types.js";
import { explicitConfigOrigin, loadConfig, redactServerConfig, type LoadedConfig } from "../../config/index.js";

const SUBCOMMANDS = ["path", "validate", "schema", "import"] as const;

function printPaths(ctx: CliContext): number {
  const p = resolvePaths(ctx.env, { cwd: ctx.cwd });
  const rows: Array<[string, string]> = [
    ["configFile", p.configFile],
    ["configDir", p.configDir],
    ["socketPath", p.socketPath],
    ["pidFile", p.pidFile],
    ["runtimeDir", p.runtimeDir],
    ["stateDir", p.stateDir],
    ["logFile", p.logFile],
    ["cacheDir", p.cacheDir],
    ["childrenFile", p.childrenFile],
  ];
  println(ctx, table(["PATH", "LOCATION"], rows, ctx.out));
  return 0;
}

async function validate(ctx: CliContext, file: string | undefined): Promise<number> {
  const target = file ?? resolvePaths(ctx.env, { cwd: ctx.cwd }).configFile;
  let config: LoadedConfig;
  try {
    // A file named on the command line or by MCPD_CONFIG must exist (the daemon refuses to start without
    // it); the default one may be absent (zero servers).
    const namedBy = file !== undefined ? undefined : explicitConfigOrigin(ctx.env);
    config = await loadConfig({
      file: target,
      env: ctx.env,
      required: file !== undefined || namedBy !== undefined,
      ...(namedBy ? { namedBy } : {}),
    });
  } catch (err) {
    if (err instanceof McpdError && err.code === "MCPD_CONFIG_INVALID") {
      println(ctx, `${ctx.out.red("invalid")}: ${err.message}`);
      return 1;
    }
    throw err;
  }
  for (const w of config.warnings) println(ctx, `${ctx.out.yellow("warning")}: ${w}`);
  if (config.source === "none") {
    println(ctx, `${config.file} does not exist: mcpd runs with no servers (valid)`);
    return 0;
  }
  const rows = config.servers.map((s) => {
    const t = redactServerConfig(s.transport);
    const target = "command" in t ? [t.command, ...(t.args ?? [])].join(" ") : t.url;
    return [s.name, t.type ?? "stdio", s.enabled ? "yes" : "no", target];
  });
  println(ctx, `${ctx.out.green("valid")}: ${config.file} (${config.servers.length} server${config.servers.length === 1 ? "" : "s"})`);
  if (rows.length > 0) println(ctx, table(["SERVER", "TYPE", "ENABLED", "TARGET"], rows, ctx.out));
  return 0;
}

/**
 * The config file's JSON Schema, as published in daemon/config.schema.json: for an editor, through the
 * file's `"$schema"` key (docs/configuration.md, *The schema, and editors*).
 */
async function printSchema(ctx: CliContext): Promise<number> {
  const { configJsonSchema } = await import("../../config/config-file-schema.js");
  println(ctx, JSON.stringify(configJsonSchema(), null, 2));
  return 0;
}

function printImport(ctx: CliContext, report: ImportReport, configFile: string, dryRun: boolean, from: ImportSource): void {
  const c = ctx.out;
  for (const f of report.scan.read) println(ctx, `read ${f}`);
  if (report.scan.read.length === 0) println(ctx, `nothing found; looked for: ${report.scan.missing.join(", ")}`);
  for (const w of report.scan.warnings) println(ctx, `${c.yellow("warning")}: ${w}`);
  for (const o of report.outcomes) {
    const label =
      o.action === "added" ? c.green(dryRun ? "would add" : "added") : o.action === "identical" ? c.dim("unchanged") : c.yellow("skipped");
    const why = o.reason ? `: ${o.reason}` : o.action === "identical" ? ": already configured the same way" : "";
    println(ctx, `${label} ${o.name}${why} (from ${o.origin})`);
    for (const n of o.notes) println(ctx, `    note: ${n}`);
    // The entry as written (dry run: as it would be), so what the file gets is never a surprise.
    if (o.entry) println(ctx, `    ${displayEntry(o.entry)}`);
  }
  for (const u of report.scan.unusable) println(ctx, `${c.yellow("skipped")} ${u.name}: ${u.reason} (from ${u.origin})`);
  const client = WHOLE_ENVIRONMENT_SOURCES[from];
  const local = report.outcomes.filter((o) => o.action === "added" && o.entry?.command !== undefined).map((o) => o.name);
  if (client && local.length > 0) {
    println(ctx, `${c.yellow("environment")}: ${client} starts its local servers with its whole environment; mcpd gives them only`);
    println(ctx, `    PATH, HOME, USER, locale, temp, proxy and CA-bundle variables plus their own "env" (envMode "allowlist").`);
    println(ctx, `    If ${local.join(", ")} needs another variable you export, add it to that server's "env" as`);
    println(ctx, `    "NAME": "\${NAME}", or set "envMode": "inherit" on it.`);
  }
  const added = report.outcomes.filter((o) => o.action === "added").length;
  const skipped = report.outcomes.filter((o) => o.action === "skipped").length + report.scan.unusable.length;
  const identical = report.outcomes.filter((o) => o.action === "identical").length;
  const summary = `${added} ${dryRun ? "to add" : "added"}, ${skipped} skipped, ${identical} unchanged`;
  if (dryRun) println(ctx, `${summary} (dry run: ${configFile} not changed)`);
  else if (report.written) {
    println(ctx, `${summary}; wrote ${configFile}${report.backup ? ` (backup: ${report.backup})` : ""}`);
    println(ctx, "Run 'mcpd reload' to apply it to a running daemon.");
  } else println(ctx, `${summary}; ${configFile} not changed`);
}

async function runImport(ctx: CliContext, values: Record<string, unknown>): Promise<number> {
  const from = stringOption(values as never, "from");
  if (from === undefined) throw new UsageError(`config import needs --from (${IMPORT_SOURCES.join(", ")})`, "config");
  if (!(IMPORT_SOURCES as readonly string[]).includes(from)) {
    throw new UsageError(`--from must be one of ${IMPORT_SOURCES.join(", ")}, got ${JSON.stringify(from)}`, "config");
  }
  const file = stringOption(values as never, "file");
  const paths = resolvePaths(ctx.env, { cwd: ctx.cwd });
  const home = ctx.env.HOME?.startsWith("/") ? ctx.env.HOME : (await import("node:os")).homedir();
  const dryRun = values["dry-run"] === true;
  let report: ImportReport;
  try {
    report = await importConfig({
      from: from as ImportSource,
      home,
      cwd: ctx.cwd,
      platform: ctx.platform,
      configFile: paths.configFile,
      dryRun,
      ...(file !== undefined ? { file: (await import("node:path")).resolve(ctx.cwd, file) } : {}),
      // Entries are checked as the daemon will load them, the same on a dry run: `${VAR:-default}` resolves
      // here, and a `${VAR}` unset in this shell is a note (the daemon's environment may have it).
      env: ctx.env,
    });
  } catch (err) {
    if (err instanceof McpdError) throw new CliError(err.message);
    throw err;
  }
  if (file !== undefined && report.scan.read.length === 0) throw new CliError(`${file}: no such file`);
  printImport(ctx, report, paths.configFile, dryRun, from as ImportSource);
  if (report.written) {
    // With this shell's real environment: names the `${VAR}`s the daemon will need.
    await loadConfig({ file: paths.configFile, env: ctx.env }).catch((err: Error) => {
      println(ctx, `${ctx.out.yellow("warning")}: with this shell's environment the daemon would refuse the file: ${err.message}`);
    });
  }
  return 0;
}

/** `mcpd config path|validate|schema|import`. */
export const configCommand: Command = {
  spec: {
    name: "config",
    usage: "config path | validate [FILE] | schema | import --from SOURCE [--file PATH] [--dry-run]",
    summary: "Show mcpd's paths, validate a config file, print its JSON Schema, or import servers from another client",
    options: {
      from: { type: "string", value: "SOURCE", description: `import: ${IMPORT_SOURCES.join(" | ")}` },
      file: { type: "string", value: "PATH", description: "import: read this file instead of the client's default locations" },
      "dry-run": { type: "boolean", description: "import: report what would change, write nothing" },
    },
    minPositionals: 1,
    maxPositionals: 2,
    details: [
      "config path             every path mcpd uses (config, socket, pid file, log, state)",
      "config validate [FILE]  load and check a config file (default: the active one); exit 1 when invalid",
      'config schema           print the config file\'s JSON Schema (for an editor: save it, point "$schema" at it)',
      "config import           merge another client's servers into mcpd's config file:",
      "  claude-desktop  ~/.config/Claude/claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/)",
      "  claude-code     ~/.claude.json (user and per-project servers) and ./.mcp.json",
      "  cursor          ~/.cursor/mcp.json and ./.cursor/mcp.json",
      "  vscode          ./.vscode/mcp.json, and the user's mcp.json and settings.json (mcp.servers)",
      "Each entry is checked as the daemon will load it (--dry-run too) and printed as it is written; one mcpd",
      "would refuse is skipped with the reason. An existing server is never overwritten (skipped and reported,",
      "unless identical). An entry that points back at mcpd itself (`mcpd connect`, a URL of mcpd's HTTP front",
      "end) is skipped. The old config is kept as config.json.bak-<timestamp>.",
    ].join("\n"),
  },
  async run(ctx, { values, positionals }) {
    const sub = positionals[0] as string;
    if (!(SUBCOMMANDS as readonly string[]).includes(sub)) {
      throw new UsageError(`unknown config subcommand ${JSON.stringify(sub)} (expected ${SUBCOMMANDS.join(", ")})`, "config");
    }
    const importOnly = ["from", "file", "dry-run"].filter((k) => values[k] !== undefined);
    if (sub !== "import" && importOnly.length > 0) throw new UsageError(`--${importOnly[0]} is only for 'config import'`, "config");
    if (sub !== "validate" && positionals.length > 1) throw new UsageError(`unexpected argument: ${positionals[1]}`, "config");
    if (sub === "path") return printPaths(ctx);
    if (sub === "validate") return validate(ctx, positionals[1]);
    if (sub === "schema") return printSchema(ctx);
    return runImport(ctx, values);
  },
};
