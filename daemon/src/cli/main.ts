import { McpdError } from "@mcpd/protocol";
import { CliError, ExitCode, parseCommand, UsageError, type CommandSpec } from "./args.js";
import { eprintln, println, processContext, type CliContext, type Command } from "./context.js";
import { commandHelp, overviewHelp } from "./help.js";
import { suggestKey } from "../config/did-you-mean.js";
import { VERSION } from "../version.js";
import { authCommand } from "./commands/auth.js";
import { callCommand } from "./commands/call.js";
import { configCommand } from "./commands/config.js";
import { connectCommand } from "./commands/connect.js";
import { disableCommand } from "./commands/disable.js";
import { enableCommand } from "./commands/enable.js";
import { installServiceCommand, uninstallServiceCommand } from "./commands/install-service.js";
import { logsCommand } from "./commands/logs.js";
import { reloadCommand } from "./commands/reload.js";
import { restartCommand } from "./commands/restart.js";
import { startCommand } from "./commands/start.js";
import { statusCommand } from "./commands/status.js";
import { stopCommand } from "./commands/stop.js";
import { promptsCommand, resourcesCommand, toolsCommand } from "./commands/tools.js";

/** Every command, in the order `mcpd help` lists them. */
export const COMMANDS: readonly Command[] = [
  startCommand,
  stopCommand,
  statusCommand,
  restartCommand,
  enableCommand,
  disableCommand,
  reloadCommand,
  logsCommand,
  toolsCommand,
  promptsCommand,
  resourcesCommand,
  callCommand,
  connectCommand,
  authCommand,
  configCommand,
  installServiceCommand,
  uninstallServiceCommand,
];

const HELP_SPEC: CommandSpec = {
  name: "help",
  usage: "help [COMMAND]",
  summary: "Show help for mcpd or one command",
  options: {},
  minPositionals: 0,
  maxPositionals: 1,
};

function find(name: string): Command | undefined {
  return COMMANDS.find((c) => c.spec.name === name);
}

function unknownCommand(name: string): UsageError {
  const names = [...COMMANDS.map((c) => c.spec.name), "help"];
  const guess = suggestKey(name, names);
  return new UsageError(`unknown command ${JSON.stringify(name)}${guess ? ` (did you mean '${guess}'?)` : ""}`);
}

async function dispatch(ctx: CliContext, argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    ctx.stderr.write(`${overviewHelp([...COMMANDS.map((c) => c.spec), HELP_SPEC], VERSION)}\n`);
    return ExitCode.Usage;
  }
  if (name === "--version" || name === "-V" || name === "version") {
    println(ctx, VERSION);
    return ExitCode.Ok;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    const { positionals } = name === "help" ? parseCommand(HELP_SPEC, rest) : { positionals: [] as string[] };
    const topic = positionals[0];
    if (topic === undefined || topic === "help") {
      println(ctx, topic === "help" ? commandHelp(HELP_SPEC) : overviewHelp([...COMMANDS.map((c) => c.spec), HELP_SPEC], VERSION));
      return ExitCode.Ok;
    }
    const command = find(topic);
    if (!command) throw unknownCommand(topic);
    println(ctx, commandHelp(command.spec));
    return ExitCode.Ok;
  }
  if (name.startsWith("-")) throw new UsageError(`unknown option ${name} (options go after the command)`);
  const command = find(name);
  if (!command) throw unknownCommand(name);
  const parsed = parseCommand(command.spec, rest);
  if (parsed.values.help) {
    println(ctx, commandHelp(command.spec));
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
    if (err instanceof McpdError) {
      eprintln(ctx, err.message);
      return err.code === "MCPD_DAEMON_UNAVAILABLE" ? ExitCode.NotRunning : ExitCode.Failure;
    }
    eprintln(ctx, err instanceof Error ? (err.stack ?? err.message) : String(err));
    return ExitCode.Failure;
  }
}
