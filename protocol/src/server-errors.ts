import { McpdError } from "./mcpd-error.js";
import { WireCode } from "./wire-codes.js";

/** A configuration file or value is invalid. The message names the file, the server and the key. */
export class ConfigError extends McpdError {
  override name = "ConfigError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("MCPD_CONFIG_INVALID", message, { ...options, wireCode: WireCode.InvalidParams });
  }
}

/**
 * A child process could not be started. `errno` is the operating system's code for why, when there is
 * one: `ENOENT` / `EACCES` / `ENOTDIR` (the command or working directory is missing or not usable: no
 * retry can help until the config changes), `EMFILE` / `ENFILE` / `EAGAIN` (out of descriptors or
 * processes for now: a later attempt may work).
 */
export class SpawnError extends McpdError {
  override name = "SpawnError";
  readonly command: string;
  readonly errno: string | undefined;
  constructor(command: string, detail: string, options: { cause?: unknown; errno?: string } = {}) {
    super("MCPD_SPAWN_FAILED", `Failed to start "${command}": ${detail}`, { cause: options.cause, wireCode: WireCode.ServerUnavailable });
    this.command = command;
    this.errno = options.errno;
  }
}

/** A server exists but cannot serve: `failed`, `disabled`, or stopped. */
export class ServerUnavailableError extends McpdError {
  override name = "ServerUnavailableError";
  readonly server: string;
  readonly state: string;
  constructor(server: string, state: string, detail?: string) {
    super("MCPD_SERVER_UNAVAILABLE", `Server "${server}" is ${state}${detail ? `: ${detail}` : ""}`, {
      wireCode: WireCode.ServerUnavailable,
      data: { server, state },
    });
    this.server = server;
    this.state = state;
  }
}

/** A name (server, tool, prompt, resource) that does not exist. The message lists what does. */
export class NotFoundError extends McpdError {
  override name = "NotFoundError";
  constructor(
    code: "MCPD_UNKNOWN_SERVER" | "MCPD_UNKNOWN_TOOL" | "MCPD_UNKNOWN_PROMPT" | "MCPD_UNKNOWN_RESOURCE" | "MCPD_UNKNOWN_PROFILE",
    message: string,
  ) {
    super(code, message, { wireCode: WireCode.InvalidParams });
  }
}

/** What kind of item a {@link HiddenError} is about. */
export type HiddenKind = "tool" | "prompt" | "resource";

/**
 * What hid an item: the connection's profile (`profile`), its one-off tools selection (`selection`), or
 * the server's own filter in the config (`server`).
 */
export type HiddenBy = "profile" | "selection" | "server";

/**
 * A tool, prompt or resource that exists but that the connection's view hides: its profile
 * (`mcpd.profiles.<name>`), its one-off tools selection, or the server's filter in the config. Hidden
 * items are absent from the listings and refused when asked for by name. The message names the item
 * and what hides it; `data` carries `kind`, `name`, `by`, and `profile` and `server` when they apply.
 */
export class HiddenError extends McpdError {
  override name = "HiddenError";
  readonly kind: HiddenKind;
  readonly by: HiddenBy;
  constructor(kind: HiddenKind, name: string, by: HiddenBy, message: string, extra: { profile?: string; server?: string } = {}) {
    super("MCPD_HIDDEN", message, { wireCode: WireCode.Hidden, data: { kind, name, by, ...extra } });
    this.kind = kind;
    this.by = by;
  }
}

/** The peer did not declare the capability a method needs; refused before going upstream. */
export class CapabilityError extends McpdError {
  override name = "CapabilityError";
  constructor(message: string) {
    super("MCPD_CAPABILITY_NOT_SUPPORTED", message, { wireCode: WireCode.CapabilityNotSupported });
  }
}

/**
 * A privileged control method (stop, disable, enable, restart, reload, stderr logs, the full status) sent on
 * a connection that is not a control connection: an agent's MCP session may not use them. The message
 * names the method and how a connection becomes a control connection.
 */
export class ForbiddenError extends McpdError {
  override name = "ForbiddenError";
  readonly method: string;
  constructor(method: string, message: string) {
    super("MCPD_FORBIDDEN", message, { wireCode: WireCode.Forbidden, data: { method } });
    this.method = method;
  }
}
