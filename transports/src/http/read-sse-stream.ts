import { type MessageTooLargeError, SseReader, type SseEvent } from "@mcpd/protocol";
import type { ResponseBody } from "./http-wire.js";

/**
 * Where an SSE stream got to: the last event id (for `Last-Event-ID` on resumption), the latest
 * `retry:` and how many events carried data. Survives the stream, so a dropped stream can be resumed.
 */
export interface SseCursor {
  lastEventId?: string;
  retryMs?: number;
  /** Events with data delivered by the current stream. */
  events: number;
}

export interface ReadSseOptions {
  /** Largest single event in bytes: its lines, line endings not counted (see `SseReaderOptions.maxEventBytes`). */
  maxEventBytes: number;
  /**
   * Called for every event that carries data (priming events with empty data only move the cursor).
   * A throw ends the stream: the body is destroyed and {@link readSseStream} rejects with it.
   */
  onEvent: (event: SseEvent) => void;
  /** Updated as events arrive; pass the previous stream's cursor when resuming. */
  cursor: SseCursor;
}

/**
 * Reads an SSE response body to its end through {@link SseReader}, delivering events
 * as they arrive. Resolves when the server ends the stream; rejects with the body's error when the
 * connection breaks or the request's signal aborts, with `MessageTooLargeError` (`MCPD_MESSAGE_TOO_LARGE`)
 * when one event grows past `maxEventBytes` (it is never buffered whole), or with whatever `onEvent` threw.
 */
export async function readSseStream(body: ResponseBody, options: ReadSseOptions): Promise<void> {
  const { cursor, maxEventBytes } = options;
  cursor.events = 0;
  // The reader bounds each event itself (its lines, keepalive comments and id-only events reset it), so an
  // event is measured from its own first byte, wherever the chunks happen to split the stream.
  let tooLarge: MessageTooLargeError | undefined;
  const reader = new SseReader({
    maxEventBytes,
    onError: (error) => {
      tooLarge ??= error;
    },
    onEvent: (event) => {
      // Nothing after an oversized event counts: the stream ends with it.
      if (tooLarge) return;
      if (event.id !== undefined) cursor.lastEventId = event.id;
      // Priming events (an id and empty data, MCP 2025-11-25) only mark a resumption point.
      if (event.data.length === 0) return;
      cursor.events++;
      options.onEvent(event);
    },
    onRetry: (ms) => {
      cursor.retryMs = ms;
    },
  });
  for await (const chunk of body as AsyncIterable<Buffer>) {
    reader.push(chunk);
    if (tooLarge) {
      body.destroy();
      throw tooLarge;
    }
  }
  reader.end();
}
