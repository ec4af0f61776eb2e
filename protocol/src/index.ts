/**
 * @mcpd/protocol: message types, guards, errors, wire codes, codecs and the JSON-RPC peer. No Node I/O.
 * Every export of this file is public API. `@mcpd/protocol/core` is the same without the SSE codec and the
 * peer, for processes that must start fast.
 */
export * from "./core.js";
export { SseReader, sseJson, parseSseText, parseSSE, type SseEvent, type SseReaderOptions } from "./sse.js";
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
export { MAX_TIMER_MS, type RequestReply } from "./peer/pending-requests.js";
