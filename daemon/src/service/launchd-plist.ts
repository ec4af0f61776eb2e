import type { ServiceSpec } from "./service-env.js";

/** Label of the launchd agent `mcpd install-service` writes (file `<label>.plist`). */
export const LAUNCHD_LABEL = "dev.mcpd";

/** Escapes text for an XML element body. */
export function xmlEscape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

/** Options of {@link launchdPlist} besides the common spec. */
export interface LaunchdOptions {
  /** Where launchd appends the daemon's stdout and stderr (what the runtime prints outside the log). */
  stdoutPath: string;
  stderrPath: string;
}

/**
 * A launchd agent plist. The daemon runs in launchd's process (`start --in-process`: no fork, logs to
 * mcpd's own rotated log file, since launchd has no journal). `KeepAlive.SuccessfulExit=false`
 * restarts it after a crash but not after `mcpd stop`, like systemd's `Restart=on-failure`.
 */
export function launchdPlist(spec: ServiceSpec, options: LaunchdOptions): string {
  const str = (s: string): string => `<string>${xmlEscape(s)}</string>`;
  const args = [spec.nodePath, ...spec.nodeFlags, spec.binPath, "start", "--in-process"];
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    "<dict>",
    "  <key>Label</key>",
    `  ${str(LAUNCHD_LABEL)}`,
    "  <key>ProgramArguments</key>",
    "  <array>",
    ...args.map((a) => `    ${str(a)}`),
    "  </array>",
    "  <key>RunAtLoad</key>",
    "  <true/>",
    "  <key>KeepAlive</key>",
    "  <dict>",
    "    <key>SuccessfulExit</key>",
    "    <false/>",
    "  </dict>",
    "  <key>ThrottleInterval</key>",
    "  <integer>5</integer>",
    "  <key>StandardOutPath</key>",
    `  ${str(options.stdoutPath)}`,
    "  <key>StandardErrorPath</key>",
    `  ${str(options.stderrPath)}`,
    "  <key>EnvironmentVariables</key>",
    "  <dict>",
    ...spec.env.flatMap(([k, v]) => [`    <key>${xmlEscape(k)}</key>`, `    ${str(v)}`]),
    "  </dict>",
    "</dict>",
    "</plist>",
    "",
  ];
  return lines.join("\n");
}

/** The commands that load and start the agent once written. */
export function launchdEnableCommands(plistPath: string): string[] {
  return [`launchctl bootstrap gui/$(id -u) ${shellQuote(plistPath)}`];
}

/** The commands that stop and unload the agent. */
export function launchdDisableCommands(): string[] {
  return [`launchctl bootout gui/$(id -u)/${LAUNCHD_LABEL}`];
}

/** Quotes a path for a POSIX shell when it needs it. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./~:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}
