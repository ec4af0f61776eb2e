/**
 * @mcpd/protocol/core: the protocol without the SSE codec (and its parser dependency) and the JSON-RPC
 * peer: message types, guards, errors and wire codes, the JSONL codec, the control declarations. For
 * processes that must start fast (`mcpd connect` runs once per agent session). Every export is also
 * exported by the package's index, from the same modules: an error class is one class whichever entry
 * loaded it. Every export of this file is public API.
 */
export * from "./types.js";
export * from "./guards.js";
export * from "./errors.js";
export { ERROR_CODES, type ErrorCodeInfo, type McpdErrorCode, errorData, isMcpdErrorCode, wireCodeOf } from "./error-codes.js";
export { WireCode, type WireCodeName } from "./wire-codes.js";
export { PROTOCOL_DEFAULTS } from "./defaults.js";
export {
  LIST_METHODS,
  MCP_METHODS,
  hasCapability,
  inEra,
  mcpMethod,
  targetOf,
  type Era,
  type ItemKind,
  type McpMethodInfo,
  type McpMethodName,
  type TargetField,
} from "./mcp-methods.js";
export {
  LATEST_MODERN_VERSION,
  META,
  MODERN_PROTOCOL_VERSIONS,
  ModernErrorCode,
  eraOf,
  isModernVersion,
  isReservedModernCode,
  PROTOCOL_ERA_SETTINGS,
  classifyProbeError,
  envelopeVersion,
  withEnvelope,
  type ModernProtocolVersion,
  type ProtocolEraSetting,
  type RequestCaller,
} from "./era.js";
export {
  MODERN_CODE_OF,
  claimedVersion,
  readEnvelope,
  toModernError,
  unsupportedVersion,
  withoutEnvelope,
  type ModernEnvelope,
} from "./modern-wire.js";
export { OLDER_DAEMON_NOTICE, RESTART_DAEMON_HINT, SOCKET_PROTOCOL_VERSIONS, olderDaemonAnswer, servesModern } from "./daemon-eras.js";
export {
  decodeHeaderValue,
  encodeHeaderValue,
  headerParams,
  paramHeaderValues,
  type HeaderParam,
  type HeaderParams,
} from "./param-headers.js";
export { UI_EXTENSION, uiExtensionOf } from "./extensions.js";
export { MAX_TIMER_MS, checkTimeoutMs, hasDeadline, type TimeoutRule } from "./timers.js";
export { Deadline } from "./deadline.js";
export { quote } from "./quote.js";
export { type Logger, silentLogger } from "./logger.js";
export { JsonLineDecoder, type JsonLineDecoderOptions, type LineError } from "./jsonl.js";
export { encodeLine } from "./jsonl-encode.js";
export {
  deliverKept,
  encodeRelayed,
  encodeRelayedLine,
  keepMadeText,
  keepResultText,
  keptResultText,
  resultTextOf,
  withMembersFirst,
} from "./raw-results.js";
export { TickBatch } from "./tick-batch.js";
export { growBytes, maxBytesOf, releasableBytes, releaseBytes } from "./releasable-bytes.js";
export * from "./control/index.js";
