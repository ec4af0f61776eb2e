import type { CommandSpec } from "./args.js";

/** The help text of one command: usage, summary, options, details. */
export function commandHelp(spec: CommandSpec): string {
  const lines = [`Usage: mcpd ${spec.usage}`, "", spec.summary];
  const options = Object.entries(spec.options).filter(([name]) => !(spec.name === "start" && name === "in-process"));
  const rows = [
    ...options.map(([name, o]) => [
      `${o.short ? `-${o.short}, ` : "    "}--${name}${o.type === "string" ? ` ${o.value ?? "VALUE"}` : ""}`,
      o.description,
    ]),
    ["-h, --help", "Show this help"],
  ];
  const width = Math.max(...rows.map((r) => (r[0] as string).length));
  lines.push("", "Options:", ...rows.map(([flag, desc]) => `  ${(flag as string).padEnd(width)}  ${desc}`));
  if (spec.details) lines.push("", spec.details);
  return lines.join("\n");
}

/** The overview `mcpd help` prints: every command with its summary, and the exit codes. */
export function overviewHelp(specs: CommandSpec[], version: string): string {
  const visible = specs.filter((s) => !s.hidden);
  const width = Math.max(...visible.map((s) => s.name.length));
  return [
    `mcpd ${version}: one daemon that owns your MCP servers and shares them with every agent over a Unix socket`,
    "",
    "Usage: mcpd <command> [options]",
    "",
    "Commands:",
    ...visible.map((s) => `  ${s.name.padEnd(width)}  ${s.summary}`),
    "",
    "Run 'mcpd help <command>' or 'mcpd <command> --help' for a command's options.",
    "Exit codes: 0 ok, 1 failure, 2 usage error, 3 daemon not running, 130 interrupted (Ctrl-C).",
    "Environment: MCPD_HOME (socket, pid, state), MCPD_SOCKET, MCPD_CONFIG, NO_COLOR. See docs/operations.md.",
  ].join("\n");
}
