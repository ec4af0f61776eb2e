import { CliError, ExitCode, parseCommand, UsageError, type CommandSpec } from "./args.js";
import { eprintln, println, processContext, type CliContext, type Command } from "./context.js";

/**
 * One row of the command table: the command's name and how to load it. A command's module (and what it
 * imports) is loaded only when that command runs or its help is shown: `mcpd connect`, which every agent
 * session spawns, must not pay for the daemon, the config loader or the service files.
 */
export interface CommandEntry {
  readonly name: string;
  readonly load: () => Promise<Command>;
}

/** Every command, in the order `mcpd help` lists them. */
export const COMMANDS: readonly CommandEntry[] = [
  { name: "start", load: async () => (await import("./commands/start.js")).startCommand },
  { name: "stop", load: async () => (await import("./commands/stop.js")).stopCommand },
  { name: "status", load: async () => (await import("./commands/status.js")).statusCommand },
  { name: "restart", load: async () => (await import("./commands/restart.js")).restartCommand },
  { name: "enable", load: async () => (await import("./commands/enable.js")).enableCommand },
  { name: "disable", load: async () => (await import("./commands/disable.js")).disableCommand },
  { name: "reload", load: async () => (await import("./commands/reload.js")).reloadCommand },
  { name: "logs", load: async () => (await import("./commands/logs.js")).logsCommand },
  { name: "tools", load: async () => (await import("./commands/tools.js")).toolsCommand },
  { name: "prompts", load: async () => (await import("./commands/tools.js")).promptsCommand },
  { name: "resources", load: async () => (await import("./commands/tools.js")).resourcesCommand },
  { name: "call", load: async () => (await import("./commands/call.js")).callCommand },
  { name: "connect", load: async () => (await import("./commands/connect.js")).connectCommand },
  { name: "http", load: async () => (await import("./commands/http.js")).httpCommand },
  { name: "dashboard", load: async () => (await import("./commands/dashboard.js")).dashboardCommand },
  { name: "auth", load: async () => (await import("./commands/auth.js")).authCommand },
  { name: "config", load: async () => (await import("./commands/config.js")).configCommand },
  { name: "install-service", load: async () => (await import("./commands/install-service.js")).installServiceCommand },
  { name: "uninstall-service", load: async () => (await import("./commands/install-service.js")).uninstallServiceCommand },
];

const HELP_SPEC: CommandSpec = {
  name: "help",
  usage: "help [COMMAND]",
  summary: "Show help for mcpd or one command",
  options: {},
  minPositionals: 0,
  maxPositionals: 1,
};

/** Loads command `name`. @throws UsageError for a name that is no command (with a close match, if any). */
async function load(name: string): Promise<Command> {
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    const { suggestKey } = await import("../config/did-you-mean.js");
    const guess = suggestKey(name, [...COMMANDS.map((c) => c.name), "help"]);
    throw new UsageError(`unknown command ${JSON.stringify(name)}${guess ? ` (did you mean '${guess}'?)` : ""}`);
  }
  return entry.load();
}

/** The overview `mcpd help` prints. Loads every command for its summary: only help pays for that. */
async function overview(): Promise<string> {
  const [{ overviewHelp }, { VERSION }, commands] = await Promise.all([
    import("./help.js"),
    import("../version.js"),
    Promise.all(COMMANDS.map((c) => c.load())),
  ]);
  return overviewHelp([...commands.map((c) => c.spec), HELP_SPEC], VERSION);
}

async function commandHelp(spec: CommandSpec): Promise<string> {
  return (await import("./help.js")).commandHelp(spec);
}

async function dispatch(ctx: CliContext, argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    ctx.stderr.write(`${await overview()}\n`);
    return ExitCode.Usage;
  }
  if (name === "--version" || name === "-V" || name === "version") {
    println(ctx, (await import("../version.js")).VERSION);
    return ExitCode.Ok;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    const { positionals } = name === "help" ? parseCommand(HELP_SPEC, rest) : { positionals: [] as string[] };
    const topic = positionals[0];
    if (topic === undefined) {
      println(ctx, await overview());
      return ExitCode.Ok;
    }
    println(ctx, await commandHelp(topic === "help" ? HELP_SPEC : (await load(topic)).spec));
    return ExitCode.Ok;
  }
  if (name.startsWith("-")) throw new UsageError(`unknown option ${name} (options go after the command)`);
  const command = await load(name);
  const parsed = parseCommand(command.spec, rest);
  if (parsed.values.help) {
    println(ctx, await commandHelp(command.spec));
    return ExitCode.Ok;
  }
  return command.run(ctx, parsed);
}

/**
 * The `mcpd` command. Runs one command and resolves with its exit code (never rejects for a command's
 * failure): 0 ok, 1 failure, 2 usage error (printed with a hint to `mcpd help <command>`), 3 daemon
 * not running, 130 interrupted.
 */
export async function main(argv: string[], ctx: CliContext = processContext()): Promise<number> {
  try {
    return await dispatch(ctx, argv);
  } catch (err) {
    if (err instanceof UsageError) {
      eprintln(ctx, err.message);
      ctx.stderr.write(`Run 'mcpd help${err.command ? ` ${err.command}` : ""}' for usage.\n`);
      return ExitCode.Usage;
    }
    if (err instanceof CliError) {
      eprintln(ctx, err.message);
      return err.exitCode;
    }
    // Loaded here, not up front: a command that failed with an McpdError has loaded the protocol already.
    const { McpdError } = await import("@mcpd/protocol/core");
    if (err instanceof McpdError) {
      eprintln(ctx, err.message);
      return err.code === "MCPD_DAEMON_UNAVAILABLE" ? ExitCode.NotRunning : ExitCode.Failure;
    }
    eprintln(ctx, err instanceof Error ? (err.stack ?? err.message) : String(err));
    return ExitCode.Failure;
  }
}
