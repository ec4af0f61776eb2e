/**
 * How a session with an upstream server begins, in its era (docs/protocol.md, "Eras upstream"): the 2025
 * `initialize` handshake, the 2026 `server/discover`, or a probe that finds out which the server speaks.
 */
import {
  HttpError,
  LATEST_MODERN_VERSION,
  LATEST_PROTOCOL_VERSION,
  McpRemoteError,
  MODERN_PROTOCOL_VERSIONS,
  ProtocolError,
  RequestTimeoutError,
  SUPPORTED_PROTOCOL_VERSIONS,
  TransportClosedError,
  classifyProbeError,
  eraOf,
  isObject,
  withEnvelope,
  META,
  type Era,
  type Implementation,
  type InitializeResult,
  type JsonObject,
  type RequestCaller,
  type ServerCapabilities,
} from "@mcpd/protocol";
import type { MCPTransport } from "@mcpd/transports";
import { RUNTIME_DEFAULTS } from "../defaults.js";

/** The server answered in the other era than the one its config forces (`protocolEra`). */
export class EraMismatchError extends ProtocolError {
  override name = "EraMismatchError";
}

/**
 * The transport closed while the `server/discover` probe was waiting (a 2025 server that exits on any
 * request before `initialize`): the server is started again in the 2025 era, not counted as a crash.
 */
export class ProbeClosedError extends TransportClosedError {
  override name = "ProbeClosedError";
}

/** Where the handshake goes: an era, and whether the config forces it (else it was remembered, or is probed when absent). */
export interface EraChoice {
  era: Era | undefined;
  forced: boolean;
}

/** Sends one handshake request (the 2026 ones with their envelope for `version`). */
export type HandshakeRequest = (method: string, params: JsonObject, version: string, timeoutMs: number | undefined) => Promise<JsonObject>;

/** Which versions mcpd speaks of those a server names. */
const ours = (versions: readonly string[]): string | undefined => MODERN_PROTOCOL_VERSIONS.find((v) => versions.includes(v));

/** The 2025 handshake's `initialize`, its answer checked. @throws ProtocolError for a version mcpd does not speak. */
export async function initialize(transport: MCPTransport, params: JsonObject, timeoutMs: number | undefined): Promise<InitializeResult> {
  const result = await transport.request<InitializeResult>("initialize", params, timeoutMs === undefined ? {} : { timeout: timeoutMs });
  if (!result || typeof result !== "object" || typeof result.protocolVersion !== "string") {
    throw new ProtocolError("Server answered initialize without a protocolVersion");
  }
  if (!(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(result.protocolVersion)) {
    throw new ProtocolError(
      `Server answered unsupported protocol version "${result.protocolVersion}" (mcpd speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
    );
  }
  return { ...result, capabilities: result.capabilities ?? {}, serverInfo: result.serverInfo ?? { name: "unknown", version: "0" } };
}

/**
 * A `server/discover` result as the session's "initialize result": the version both speak, the server's
 * capabilities, instructions, and its identity (from the result's `_meta`).
 * @throws ProtocolError when the result is malformed or names no version mcpd speaks.
 */
export function fromDiscover(result: JsonObject): InitializeResult {
  const versions = Array.isArray(result.supportedVersions) ? result.supportedVersions.filter((v) => typeof v === "string") : undefined;
  if (versions === undefined || !isObject(result.capabilities)) {
    throw new ProtocolError("Server answered server/discover without supportedVersions or capabilities");
  }
  const version = ours(versions as string[]);
  if (version === undefined) {
    throw new ProtocolError(`Server supports protocol versions ${versions.join(", ")}; mcpd speaks ${MODERN_PROTOCOL_VERSIONS.join(", ")}`);
  }
  const meta = isObject(result._meta) ? result._meta : {};
  const serverInfo = isObject(meta[META.serverInfo])
    ? (meta[META.serverInfo] as unknown as Implementation)
    : { name: "unknown", version: "0" };
  const out: InitializeResult = { protocolVersion: version, capabilities: result.capabilities as ServerCapabilities, serverInfo };
  if (typeof result.instructions === "string") out.instructions = result.instructions;
  return out;
}

/** What a -32022 answer to `initialize` says: the server speaks the 2026 era only. Undefined: it says nothing of the kind. */
export function modernRefusal(err: unknown): string[] | undefined {
  if (!(err instanceof McpRemoteError)) return undefined;
  const verdict = classifyProbeError({ code: err.rpcCode, data: err.data });
  return verdict.era === "2026" && verdict.supported ? verdict.supported : undefined;
}

/**
 * The era a failed `server/discover` proves, per the 2026 spec's era probing: a recognised 2026 error
 * means 2026; any other JSON-RPC error means 2025; so does no answer within the probe's bound over stdio
 * (or WebSocket), and an HTTP 400, 404 or 405 without a 2026 error in its body. Anything else (a 401, 403, 5xx, a network
 * error, an HTTP timeout) proves nothing: it is thrown, and the start fails as any other would.
 * @throws ProbeClosedError when the transport closed meanwhile (the server exited), and what proves nothing.
 */
export function probeVerdict(err: unknown, transport: MCPTransport): { era: Era; supported?: string[] } {
  // The pending request may be failed before the transport says it is closed.
  if (!transport.connected || err instanceof TransportClosedError) {
    throw new ProbeClosedError(err instanceof TransportClosedError ? err.reason : (err as Error)?.message, { cause: err });
  }
  if (err instanceof McpRemoteError) return classifyProbeError({ code: err.rpcCode, data: err.data });
  if (err instanceof HttpError && [400, 404, 405].includes(err.status)) return { era: "2025" };
  // Silence on a byte stream (stdio, WebSocket) means 2025; over Streamable HTTP it proves nothing.
  if (err instanceof RequestTimeoutError && transport.info().type !== "http") return { era: "2025" };
  throw err;
}

/**
 * Probes the server's era with `server/discover` (bounded by `timeoutMs`): its result when the server
 * speaks 2026, undefined when it speaks 2025 (also when it answers with something that is no discover
 * result naming a 2026 version). A -32022 naming a 2026 version mcpd speaks is retried once at that version. @throws see {@link probeVerdict}; ProtocolError when the server speaks no version mcpd does.
 */
export async function probe(send: HandshakeRequest, transport: MCPTransport, timeoutMs: number): Promise<InitializeResult | undefined> {
  let version: string = MODERN_PROTOCOL_VERSIONS[0];
  for (let attempt = 0; ; attempt++) {
    let result: JsonObject;
    try {
      result = await send("server/discover", {}, version, timeoutMs);
    } catch (err) {
      const verdict = probeVerdict(err, transport);
      if (verdict.era === "2025") return undefined;
      const next = verdict.supported ? ours(verdict.supported) : undefined;
      if (verdict.supported && next === undefined) {
        throw new ProtocolError(
          `Server supports protocol versions ${verdict.supported.join(", ")}; mcpd speaks ${MODERN_PROTOCOL_VERSIONS.join(", ")}`,
        );
      }
      // -32020/-32021 to a bare discover, or a second -32022: a 2026 server mcpd cannot talk to.
      if (next === undefined || attempt > 0) throw err;
      version = next;
      continue;
    }
    // Some 2025 servers answer any method they do not know with an empty result: no discover result, no 2026.
    const versions = Array.isArray(result?.supportedVersions) ? (result.supportedVersions as unknown[]) : [];
    if (!isObject(result?.capabilities) || !versions.some((v) => typeof v === "string" && eraOf(v) === "2026")) return undefined;
    return fromDiscover(result);
  }
}

/** What -32022-type refusals of the era a config forces say, as the start failure's reason. */
function mismatch(forced: Era, detail: string): EraMismatchError {
  const other = forced === "2025" ? "2026" : "2025";
  return new EraMismatchError(`${detail}; "protocolEra": "${forced}" forces the ${forced} era: set it to "auto" or "${other}"`);
}

/**
 * Opens a session in `choice`'s era: the 2025 `initialize` (offering the newest version) or the 2026
 * `server/discover`, with `own` as the client (its envelope on 2026 requests); with no era given, a probe
 * ({@link probe}, bounded by the probe timeout and `timeoutMs`) decides. An era that is remembered, not
 * forced, gives way to the other when the server's answer proves it speaks that one.
 * @throws EraMismatchError when the server refuses the era the config forces; see {@link probe}.
 */
export async function openSession(
  transport: MCPTransport,
  own: RequestCaller,
  choice: EraChoice,
  timeoutMs: number | undefined,
): Promise<{ result: InitializeResult; era: Era }> {
  const send: HandshakeRequest = (method, params, version, ms) =>
    transport.request<JsonObject>(method, withEnvelope(params, version, undefined, own), ms === undefined ? {} : { timeout: ms });
  const discover = async (): Promise<{ result: InitializeResult; era: Era }> => ({
    result: fromDiscover(await send("server/discover", {}, LATEST_MODERN_VERSION, timeoutMs)),
    era: "2026",
  });
  let era = choice.era;
  if (era === undefined) {
    const discovered = await probe(send, transport, Math.min(timeoutMs ?? Number.POSITIVE_INFINITY, RUNTIME_DEFAULTS.eraProbeTimeoutMs));
    if (discovered) return { result: discovered, era: "2026" };
    era = "2025";
  }
  if (era === "2026") {
    try {
      return await discover();
    } catch (err) {
      if (!(err instanceof McpRemoteError) || probeVerdict(err, transport).era === "2026") throw err;
      if (choice.forced) throw mismatch("2026", `The server answered server/discover with ${err.message}, as a 2025-era server does`);
    }
  }
  const params = { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: own.clientCapabilities ?? {}, clientInfo: own.clientInfo ?? {} };
  try {
    return { result: await initialize(transport, params, timeoutMs), era: "2025" };
  } catch (err) {
    const supported = modernRefusal(err);
    if (supported === undefined) throw err;
    if (choice.forced) throw mismatch("2025", `The server speaks only MCP ${supported.join(", ")} (the 2026 era) and refused initialize`);
    return discover();
  }
}
