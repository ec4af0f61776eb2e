import { mkdir, rm, writeFile, lstat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { DAEMON_NODE_FLAGS } from "../infra/node-flags.js";
import { serviceEnvironment, type ServiceSpec } from "./service-env.js";
import { SYSTEMD_UNIT_NAME, systemdDisableCommands, systemdEnableCommands, systemdUnit } from "./systemd-unit.js";
import { LAUNCHD_LABEL, launchdDisableCommands, launchdEnableCommands, launchdPlist } from "./launchd-plist.js";

/** The service managers `mcpd install-service` writes for. */
export type ServiceKind = "systemd" | "launchd";

/** The default service manager of a platform: launchd on macOS, systemd elsewhere. */
export function defaultServiceKind(platform: NodeJS.Platform): ServiceKind {
  return platform === "darwin" ? "launchd" : "systemd";
}

/**
 * Where the service file lives: `~/.config/systemd/user/mcpd.service` (honouring XDG_CONFIG_HOME) or
 * `~/Library/LaunchAgents/dev.mcpd.plist`. `home` comes from HOME so tests can point it elsewhere.
 */
export function serviceFilePath(kind: ServiceKind, home: string, env: NodeJS.ProcessEnv = {}): string {
  if (kind === "launchd") return join(home, "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
  const configHome = env.XDG_CONFIG_HOME?.startsWith("/") ? env.XDG_CONFIG_HOME : join(home, ".config");
  return join(configHome, "systemd", "user", SYSTEMD_UNIT_NAME);
}

/** Inputs of {@link renderService}. */
export interface ServiceInputs {
  kind: ServiceKind;
  nodePath: string;
  binPath: string;
  env: NodeJS.ProcessEnv;
  /** The installing shell's directory: relative `MCPD_*` paths in `env` are resolved against it. */
  cwd: string;
  /** mcpd's log file; launchd's stdout/stderr files are put beside it. */
  logFile: string;
}

/** The service file's text for the installing shell. */
export function renderService(inputs: ServiceInputs): string {
  const spec: ServiceSpec = {
    nodePath: inputs.nodePath,
    nodeFlags: DAEMON_NODE_FLAGS,
    binPath: inputs.binPath,
    env: serviceEnvironment(inputs.env, inputs.cwd),
  };
  if (inputs.kind === "systemd") return systemdUnit(spec);
  const dir = dirname(inputs.logFile);
  return launchdPlist(spec, { stdoutPath: join(dir, "launchd.stdout.log"), stderrPath: join(dir, "launchd.stderr.log") });
}

/** What {@link installService} did, and what the user runs next. */
export interface InstallResult {
  file: string;
  replaced: boolean;
  commands: string[];
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Writes the service file (creating its directory, replacing an older one) and returns the enable commands. */
export async function installService(inputs: ServiceInputs & { home: string }): Promise<InstallResult> {
  const file = serviceFilePath(inputs.kind, inputs.home, inputs.env);
  const replaced = await exists(file);
  await mkdir(dirname(file), { recursive: true });
  if (inputs.kind === "launchd") await mkdir(dirname(inputs.logFile), { recursive: true, mode: 0o700 });
  await writeFile(file, renderService(inputs), { mode: 0o644 });
  const commands = inputs.kind === "systemd" ? systemdEnableCommands() : launchdEnableCommands(file);
  return { file, replaced, commands };
}

/** What {@link uninstallService} removed, and what the user runs to stop the running service. */
export interface UninstallResult {
  removed: string[];
  commands: string[];
}

/**
 * Removes the service file (and, for systemd, the `default.target.wants` link `enable` made, which is
 * all `systemctl disable` does) without touching the running service manager: the returned commands
 * stop it. Removing nothing is not an error.
 */
export async function uninstallService(kind: ServiceKind, home: string, env: NodeJS.ProcessEnv = {}): Promise<UninstallResult> {
  const file = serviceFilePath(kind, home, env);
  const candidates = [file];
  if (kind === "systemd") candidates.push(join(dirname(file), "default.target.wants", SYSTEMD_UNIT_NAME));
  const removed: string[] = [];
  for (const path of candidates) {
    if (await exists(path)) {
      await rm(path, { force: true });
      removed.push(path);
    }
  }
  const commands = removed.length === 0 ? [] : kind === "systemd" ? systemdDisableCommands() : launchdDisableCommands();
  return { removed, commands };
}
