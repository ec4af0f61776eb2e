/**
 * The checks and answers of a connection's handshake: `mcpd/select` (view, selection, events, control) and
 * `initialize` (protocol version, the clientInfo kept). The session keeps the state; acceptInitialize records it there.
 */
import {
  ForbiddenError,
  LATEST_PROTOCOL_VERSION,
  McpdSelect,
  SUPPORTED_PROTOCOL_VERSIONS,
  WireCode,
  isObject,
  toWireError,
  type ClientCapabilities,
  type InitializeResult,
  type JsonObject,
  type JsonRpcErrorObject,
  PROTOCOL_DEFAULTS,
  quote,
} from "@mcpd/protocol";
import { globProblem } from "../config/globs.js";
import type { ToolSearchMode } from "../config/config-schema.js";
import { isToolSearchMode } from "../config/tool-search-setting.js";
import { CONFIG_DEFAULTS, RUNTIME_DEFAULTS } from "../defaults.js";

/** What a valid `mcpd/select` asks for. */
export interface Selection {
  /** The one server to view (transparent view); undefined: the aggregate view. */
  server: string | undefined;
  /** Whether the connection wants `notifications/mcpd/serverState`. */
  events: boolean;
  /** Whether it declares itself a control connection. */
  control: boolean;
  /** The profile selected (whether it exists is for the caller to check). */
  profile: string | undefined;
  /** One-off tool globs, each checked to be a usable glob. */
  tools: string[] | undefined;
  /** The tool-search mode asked for (docs/tool-search.md); undefined: its profile's, else off. */
  toolSearch: ToolSearchMode | undefined;
}

/** The answer to a message that is no JSON-RPC 2.0 message at all. */
export const NOT_JSON_RPC: Readonly<JsonRpcErrorObject> = Object.freeze({
  code: WireCode.InvalidRequest,
  message: "Invalid request: not a JSON-RPC 2.0 message",
  data: Object.freeze({ mcpdCode: "MCPD_PROTOCOL_VIOLATION" }),
});

/** The answer to an MCP request (not `mcpd/*`, not `ping`) before the connection's `initialize`. */
export const NOT_INITIALIZED: Readonly<JsonRpcErrorObject> = Object.freeze({
  code: WireCode.InvalidRequest,
  message: "Not initialized: send initialize (then notifications/initialized) before other requests",
  data: Object.freeze({ mcpdCode: "MCPD_PROTOCOL_VIOLATION" }),
});

/** A bad `mcpd/select` param: -32602 naming it. */
function badParam(message: string): { error: JsonRpcErrorObject } {
  return {
    error: { code: WireCode.InvalidParams, message: `${McpdSelect.method}: ${message}`, data: { mcpdCode: "MCPD_PROTOCOL_VIOLATION" } },
  };
}

/**
 * Checks `tools` of `mcpd/select`: a non-empty array of at most `RUNTIME_DEFAULTS.maxSelectionGlobs`
 * usable globs, each at most `CONFIG_DEFAULTS.maxGlobChars` characters. Never echoes a bad value whole.
 */
export function parseToolGlobs(value: unknown): string[] | undefined | { error: JsonRpcErrorObject } {
  if (value === undefined) return undefined;
  const max = RUNTIME_DEFAULTS.maxSelectionGlobs;
  if (!Array.isArray(value) || value.length === 0 || value.length > max) {
    return badParam(`"tools" must be an array of 1 to ${max} tool globs such as ["github__*", "*__search"]`);
  }
  for (const [i, glob] of value.entries()) {
    if (typeof glob !== "string") return badParam(`"tools[${i}]" must be a string`);
    const problem =
      glob.length > CONFIG_DEFAULTS.maxGlobChars ? `longer than ${CONFIG_DEFAULTS.maxGlobChars} characters` : globProblem(glob);
    if (problem !== undefined)
      return badParam(`"tools[${i}]" ${JSON.stringify(quote(glob, PROTOCOL_DEFAULTS.quotedGlobChars))} is not a usable glob: ${problem}`);
  }
  return [...new Set(value as string[])];
}

/**
 * Checks the params of `mcpd/select`: `control` is a boolean and declared only by a connection's first
 * message (an agent's MCP session, which has spoken before, never becomes a control connection), select
 * comes before initialize, `server` and `profile` are strings, `tools` a list of usable globs. Whether
 * that server or profile exists is for the caller to check.
 */
export function parseSelect(
  params: JsonObject | undefined,
  firstMessage: boolean,
  initialized: boolean,
): Selection | { error: JsonRpcErrorObject } {
  const control = params?.control;
  if (control !== undefined && typeof control !== "boolean") {
    return {
      error: {
        code: WireCode.InvalidParams,
        message: `${McpdSelect.method}: "control" must be a boolean`,
        data: { mcpdCode: "MCPD_PROTOCOL_VIOLATION" },
      },
    };
  }
  // Checked first: a session that already sent initialize is exactly what must never become control.
  if (control === true && !firstMessage) {
    return {
      error: toWireError(
        new ForbiddenError(
          McpdSelect.method,
          `${McpdSelect.method} {"control": true} must be the first message on a connection: a connection that has already ` +
            "spoken (an agent's MCP session, or one opened by `mcpd connect`) cannot become a control connection",
        ),
      ),
    };
  }
  if (initialized) return { error: { code: WireCode.InvalidRequest, message: `${McpdSelect.method} must come before initialize` } };
  const server = params?.server;
  if (server !== undefined && typeof server !== "string") {
    return { error: { code: WireCode.InvalidParams, message: `${McpdSelect.method}: "server" must be a string` } };
  }
  const profile = params?.profile;
  if (profile !== undefined && (typeof profile !== "string" || profile === "")) return badParam(`"profile" must be a profile's name`);
  const tools = parseToolGlobs(params?.tools);
  if (tools !== undefined && "error" in tools) return tools;
  const toolSearch = params?.toolSearch;
  if (toolSearch !== undefined && !isToolSearchMode(toolSearch)) return badParam(`"toolSearch" must be "on", "off" or "auto"`);
  return { server, events: params?.events === true, control: control === true, profile, tools, toolSearch };
}

/** The protocol version answered: the client's when mcpd supports it, else the latest. */
export function negotiateVersion(requested: unknown): string {
  return typeof requested === "string" && (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(requested)
    ? requested
    : LATEST_PROTOCOL_VERSION;
}

/** Largest clientInfo kept as sent, in bytes of JSON; a bigger one is cut down. */
const MAX_CLIENT_INFO_BYTES = 4096;

/**
 * The clientInfo kept for status and logs. It is echoed to every `mcpd/status` caller, so a value with no
 * JSON form (nested too deep to serialize) or a huge one must not be kept as is: it would make every
 * status answer fail to encode. Such a value is cut down to its string name/version/title (256 chars each).
 */
export function boundedClientInfo(value: unknown): JsonObject | undefined {
  if (!isObject(value)) return undefined;
  try {
    if (JSON.stringify(value).length <= MAX_CLIENT_INFO_BYTES) return value;
  } catch {
    // No JSON form: fall through to the cut-down copy.
  }
  const out: JsonObject = {};
  for (const k of ["name", "version", "title"]) {
    const v = value[k];
    if (typeof v === "string") out[k] = v.slice(0, 256);
  }
  return out;
}

/**
 * The initialize answer of a server's transparent view: the server's own capabilities, serverInfo and
 * instructions, with the version negotiated with this client.
 */
export function serverViewInitializeResult(server: string, init: InitializeResult | undefined, protocolVersion: string): JsonObject {
  const result: JsonObject = {
    protocolVersion,
    capabilities: init?.capabilities ?? {},
    serverInfo: init?.serverInfo ?? { name: server, version: "0" },
  };
  if (init?.instructions !== undefined) result.instructions = init.instructions;
  return result;
}

/** What a 2025-era `initialize` sets on the connection it arrives on. */
export interface Initializing {
  clientInfo: JsonObject | undefined;
  clientCapabilities: ClientCapabilities;
  initialized: boolean;
}

/** Accepts a 2025-era `initialize`: records the client's info and capabilities; the version to answer with. */
export function acceptInitialize(session: Initializing, params: JsonObject | undefined): string {
  const p = params ?? {};
  session.clientInfo = boundedClientInfo(p.clientInfo);
  session.clientCapabilities = isObject(p.capabilities) ? (p.capabilities as ClientCapabilities) : {};
  session.initialized = true;
  return negotiateVersion(p.protocolVersion);
}
