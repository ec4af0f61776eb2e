import type { ServiceSpec } from "./service-env.js";

/** Name of the systemd user unit `mcpd install-service` writes. */
export const SYSTEMD_UNIT_NAME = "mcpd.service";

/**
 * Quotes one word for a systemd unit line: inside double quotes with `\` and `"` escaped; `%` doubled
 * because systemd expands `%` specifiers everywhere; `$` doubled on ExecStart lines, where systemd
 * expands environment variables (see systemd.service(5), "Command lines").
 */
export function systemdQuote(word: string, execLine = false): string {
  let s = word.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%");
  if (execLine) s = s.replace(/\$/g, "$$$$");
  return `"${s}"`;
}

/**
 * A systemd user unit that runs `mcpd start --foreground` (logs go to the journal), node given the daemon's
 * flags.
 * `KillMode=mixed` sends SIGTERM to the daemon only, so it can shut its servers down in order (closing
 * stdin first, as MCP asks) before systemd kills whatever is left in the cgroup.
 */
export function systemdUnit(spec: ServiceSpec): string {
  const exec = [
    systemdQuote(spec.nodePath, true),
    ...spec.nodeFlags.map((f) => systemdQuote(f, true)),
    systemdQuote(spec.binPath, true),
    "start",
    "--foreground",
  ].join(" ");
  const lines = [
    "# Written by `mcpd install-service`. Remove with `mcpd uninstall-service`.",
    "[Unit]",
    "Description=mcpd: one daemon that owns local MCP servers and shares them over a Unix socket",
    "",
    "[Service]",
    "Type=simple",
    `ExecStart=${exec}`,
    "ExecReload=/bin/kill -HUP $MAINPID",
    "Restart=on-failure",
    "RestartSec=2",
    "KillMode=mixed",
    "TimeoutStopSec=20",
    ...spec.env.map(([k, v]) => `Environment=${systemdQuote(`${k}=${v}`)}`),
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ];
  return lines.join("\n");
}

/** The commands that load and start the unit once written. */
export function systemdEnableCommands(): string[] {
  return ["systemctl --user daemon-reload && systemctl --user enable --now mcpd"];
}

/** The commands that stop and forget the unit once its files are removed. */
export function systemdDisableCommands(): string[] {
  return ["systemctl --user stop mcpd; systemctl --user daemon-reload"];
}
