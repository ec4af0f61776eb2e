/**
 * @mcpd/protocol: message types, guards, errors, wire codes, codecs and the JSON-RPC peer. No Node I/O.
 * Every export of this file is public API. `@mcpd/protocol/core` is the same without the SSE codec and the
 * peer, for processes that must start fast; `@mcpd/protocol/peer` is the peer alone.
 */
export * from "./core.js";
export { SseReader, sseJson, parseSseText, parseSSE, type SseEvent, type SseReaderOptions } from "./sse.js";
export * from "./peer/index.js";
