/**
 * @mcpd/protocol: message types, guards, errors, wire codes, codecs and the JSON-RPC peer. No Node I/O.
 * Every export of this file is public API.
 */
export * from "./types.js";
export * from "./guards.js";
export * from "./errors.js";
export { WireCode, type WireCodeName } from "./wire-codes.js";
export { PROTOCOL_DEFAULTS } from "./defaults.js";
export { type Logger, silentLogger } from "./logger.js";
export { JsonLineDecoder, encodeLine, type JsonLineDecoderOptions, type LineError } from "./jsonl.js";
export { SseReader, sseJson, parseSseText, parseSSE, type SseEvent, type SseReaderOptions } from "./sse.js";
export * from "./control/index.js";
export {
  JsonRpcPeer,
  type JsonRpcPeerOptions,
  type MessageContext,
  type PeerNotificationHandler,
  type PeerRequestHandler,
  type PeerRequestOptions,
  type PeerSink,
} from "./peer/jsonrpc-peer.js";
export { Cancellation, type CancelById } from "./peer/cancellation.js";
export { SignalFanout } from "./peer/signal-fanout.js";
export { MAX_TIMER_MS } from "./peer/pending-requests.js";
