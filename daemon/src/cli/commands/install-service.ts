import { homedir } from "node:os";
import { resolvePaths } from "@mcpd/client/paths";
import { UsageError } from "../args.js";
import { println, type CliContext, type Command } from "../context.js";
import { binPath } from "../../infra/package-root.js";
import { defaultServiceKind, installService, renderService, uninstallService, type ServiceKind } from "../../service/service-install.js";

function kindOf(ctx: CliContext, values: Record<string, unknown>, command: string): ServiceKind {
  if (values.systemd && values.launchd) throw new UsageError("give --systemd or --launchd, not both", command);
  return values.systemd ? "systemd" : values.launchd ? "launchd" : defaultServiceKind(ctx.platform);
}

function homeOf(ctx: CliContext): string {
  return ctx.env.HOME?.startsWith("/") ? ctx.env.HOME : homedir();
}

const KIND_OPTIONS = {
  systemd: { type: "boolean", description: "A systemd user unit (default on Linux)" },
  launchd: { type: "boolean", description: "A launchd agent (default on macOS)" },
} as const;

/** `mcpd install-service`. */
export const installServiceCommand: Command = {
  spec: {
    name: "install-service",
    usage: "install-service [--print] [--systemd | --launchd]",
    summary: "Install mcpd as a user service that starts at login and restarts after a crash",
    options: { ...KIND_OPTIONS, print: { type: "boolean", description: "Print the service file instead of writing it" } },
    minPositionals: 0,
    maxPositionals: 0,
    details: [
      "systemd: ~/.config/systemd/user/mcpd.service; launchd: ~/Library/LaunchAgents/dev.mcpd.plist.",
      "The service runs this node and this mcpd by absolute path, with this shell's PATH (so servers' commands",
      "such as npx or uvx resolve as they do here) and every MCPD_* variable that is set (relative paths in",
      "MCPD_HOME, MCPD_CONFIG, MCPD_CONFIG_DIR and MCPD_SOCKET made absolute against this directory).",
      "Re-run it after moving node or mcpd. It prints the commands that enable and start the service; it runs",
      "none itself.",
    ].join("\n"),
  },
  async run(ctx, { values }) {
    const kind = kindOf(ctx, values, "install-service");
    const inputs = {
      kind,
      nodePath: process.execPath,
      binPath: binPath(),
      env: ctx.env,
      cwd: ctx.cwd,
      logFile: resolvePaths(ctx.env, { cwd: ctx.cwd }).logFile,
    };
    if (values.print) {
      ctx.stdout.write(renderService(inputs));
      return 0;
    }
    const r = await installService({ ...inputs, home: homeOf(ctx) });
    println(ctx, `${r.replaced ? "replaced" : "wrote"} ${r.file}`);
    println(ctx, "Enable and start it with:");
    for (const c of r.commands) println(ctx, `  ${c}`);
    return 0;
  },
};

/** `mcpd uninstall-service`. */
export const uninstallServiceCommand: Command = {
  spec: {
    name: "uninstall-service",
    usage: "uninstall-service [--systemd | --launchd]",
    summary: "Remove the user service file written by install-service",
    options: { ...KIND_OPTIONS },
    minPositionals: 0,
    maxPositionals: 0,
    details: "It removes the file (and systemd's enable link) and prints the commands that stop the running service.",
  },
  async run(ctx, { values }) {
    const kind = kindOf(ctx, values, "uninstall-service");
    const r = await uninstallService(kind, homeOf(ctx), ctx.env);
    if (r.removed.length === 0) {
      println(ctx, `no ${kind} service installed`);
      return 0;
    }
    for (const f of r.removed) println(ctx, `removed ${f}`);
    println(ctx, "Stop the running service with:");
    for (const c of r.commands) println(ctx, `  ${c}`);
    return 0;
  },
};
