/**
 * What a 2026-era request carries and what its answer must look like: the `_meta` envelope read and
 * checked ({@link readEnvelope}), and mcpd's own error codes, which sit in the range the 2026 era
 * reserves for the specification, mapped to codes a 2026 client may receive ({@link toModernError}).
 */
import { LOG_LEVELS, type JsonObject, type JsonRpcErrorObject, type LogLevel } from "./types.js";
import {
  META,
  MODERN_PROTOCOL_VERSIONS,
  ModernErrorCode,
  isModernVersion,
  isReservedModernCode,
  type ModernProtocolVersion,
} from "./era.js";
import { WireCode } from "./wire-codes.js";

/** A 2026-era request's `_meta` envelope, checked. */
export interface ModernEnvelope {
  readonly protocolVersion: ModernProtocolVersion;
  /** The client's capabilities for this request only (`{}`: none). */
  readonly clientCapabilities: JsonObject;
  readonly clientInfo?: JsonObject;
  /** The least level of `notifications/message` wanted for this request; none: no log messages. */
  readonly logLevel?: LogLevel;
}

const isObj = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** The version a request's `params._meta` claims (`io.modelcontextprotocol/protocolVersion`); undefined: no claim (a 2025-era request). */
export function claimedVersion(params: unknown): unknown {
  if (!isObj(params) || !isObj(params._meta)) return undefined;
  return params._meta[META.protocolVersion];
}

/** The -32022 answer naming the versions mcpd serves to 2026-era clients; `requested` left out when none was named. */
export function unsupportedVersion(requested: unknown): JsonRpcErrorObject {
  const named = typeof requested === "string" ? requested.slice(0, 64) : undefined;
  const data: JsonObject = { supported: [...MODERN_PROTOCOL_VERSIONS] };
  if (named !== undefined) data.requested = named;
  return {
    code: ModernErrorCode.UnsupportedProtocolVersion,
    message: named === undefined ? "Unsupported protocol version: the request did not name one" : `Unsupported protocol version: ${named}`,
    data,
  };
}

const invalid = (message: string): { error: JsonRpcErrorObject } => ({ error: { code: WireCode.InvalidParams, message } });

/**
 * Reads the envelope of a request that claims a version in its `_meta`: -32022 for a version mcpd does
 * not serve, -32602 for a required key missing or a key of the wrong type (the 2026 rules for a
 * malformed envelope), else the envelope.
 */
export function readEnvelope(params: unknown): ModernEnvelope | { error: JsonRpcErrorObject } {
  const meta = isObj(params) && isObj(params._meta) ? params._meta : {};
  const version = meta[META.protocolVersion];
  if (typeof version !== "string") return invalid(`_meta["${META.protocolVersion}"] must be a string`);
  if (!isModernVersion(version)) return { error: unsupportedVersion(version) };
  const caps = meta[META.clientCapabilities];
  if (!isObj(caps)) return invalid(`_meta["${META.clientCapabilities}"] must be an object (the client's capabilities, {} for none)`);
  const info = meta[META.clientInfo];
  if (info !== undefined && !isObj(info)) return invalid(`_meta["${META.clientInfo}"] must be an object`);
  const level = meta[META.logLevel];
  if (level !== undefined && !(LOG_LEVELS as readonly unknown[]).includes(level))
    return invalid(`_meta["${META.logLevel}"] must be one of ${LOG_LEVELS.join(", ")}`);
  const envelope: { -readonly [K in keyof ModernEnvelope]: ModernEnvelope[K] } = { protocolVersion: version, clientCapabilities: caps };
  if (info !== undefined) envelope.clientInfo = info;
  if (level !== undefined) envelope.logLevel = level as LogLevel;
  return envelope;
}

/** The envelope's keys: what a request's `_meta` loses on its way to a server (everything else, `traceparent` included, stays). */
const ENVELOPE_KEYS: readonly string[] = [META.protocolVersion, META.clientCapabilities, META.clientInfo, META.logLevel];

/** `params` without the envelope's keys in `_meta` (and without `_meta` when nothing else was in it). */
export function withoutEnvelope(params: JsonObject | undefined): JsonObject | undefined {
  if (!params || !isObj(params._meta)) return params;
  const source = params._meta;
  // Spread and delete, not assignment key by key: a member named `__proto__` stays a member.
  const { _meta, ...rest } = params;
  for (const k in source) {
    if (ENVELOPE_KEYS.includes(k)) continue;
    const meta: JsonObject = { ...source };
    for (const key of ENVELOPE_KEYS) delete meta[key];
    rest._meta = meta;
    break;
  }
  return rest;
}

/**
 * The standard code a 2026-era client gets for each of mcpd's own codes (which fall in -32020..-32099, the
 * range the 2026 era reserves: no implementation may send codes there that the specification does not
 * define). The original goes along in `data.mcpdWireCode`, beside `data.mcpdCode` (the stable string code).
 */
export const MODERN_CODE_OF: Readonly<Record<number, number>> = {
  [WireCode.ServerUnavailable]: WireCode.InternalError,
  [WireCode.RequestTimeout]: WireCode.InternalError,
  [WireCode.UpstreamClosed]: WireCode.InternalError,
  [WireCode.TooManyRequests]: WireCode.InternalError,
  [WireCode.QueueFull]: WireCode.InternalError,
  [WireCode.ShuttingDown]: WireCode.InternalError,
  [WireCode.NoClientForRequest]: WireCode.InternalError,
  [WireCode.UpstreamHttpError]: WireCode.InternalError,
  [WireCode.MessageTooLarge]: WireCode.InvalidRequest,
  // A method behind a capability the server did not advertise is "method not found" in 2026.
  [WireCode.CapabilityNotSupported]: WireCode.MethodNotFound,
  [WireCode.Cancelled]: WireCode.InternalError,
  [WireCode.Forbidden]: WireCode.InvalidRequest,
  [WireCode.TooManyConnections]: WireCode.InternalError,
  [WireCode.BufferBudgetExceeded]: WireCode.InternalError,
  [WireCode.LineTimeout]: WireCode.InvalidRequest,
  // A name the view hides is, to the client, a name it cannot use: invalid params, as an unknown tool is.
  [WireCode.Hidden]: WireCode.InvalidParams,
  [WireCode.AuthRequired]: WireCode.InternalError,
};

const DEFINED_MODERN: ReadonlySet<number> = new Set(Object.values(ModernErrorCode));

/**
 * A 2025 server's "resource not found" (2025-11-25 and earlier), a code 2026-07-28 retired: no
 * implementation of it may send it, and a 2026 client gets -32602 (what that revision uses) instead.
 */
const RESOURCE_NOT_FOUND_2025 = -32002;

/**
 * `error` as a 2026-era client may receive it: a code in the reserved range that the specification does
 * not define (mcpd's own, or a 2025 server's, such as -32042) becomes the standard code of
 * {@link MODERN_CODE_OF} (-32603 for one it does not name), and a 2025 server's -32002 (resource not
 * found, retired) becomes -32602, the original kept in `data.mcpdWireCode`; anything else is unchanged.
 */
export function toModernError(error: JsonRpcErrorObject): JsonRpcErrorObject {
  const retired = error.code === RESOURCE_NOT_FOUND_2025;
  if (!retired && (!isReservedModernCode(error.code) || DEFINED_MODERN.has(error.code))) return error;
  const data: JsonObject = isObj(error.data) ? { ...error.data } : error.data === undefined ? {} : { detail: error.data };
  data.mcpdWireCode = error.code;
  return { code: retired ? WireCode.InvalidParams : (MODERN_CODE_OF[error.code] ?? WireCode.InternalError), message: error.message, data };
}
