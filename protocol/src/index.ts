/**
 * @mcpd/protocol: message types, guards, errors, wire codes and codecs. No Node I/O.
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
