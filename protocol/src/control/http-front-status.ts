import type { Fields } from "./fields.js";

/** The HTTP front end (MCP over Streamable HTTP and legacy SSE on loopback) in `mcpd/status`. */
export interface HttpFrontStatus {
  /** `mcpd.http.enabled`. */
  enabled: boolean;
  /** The aggregate view's endpoint (`http://127.0.0.1:7767/mcp`), or null when not listening. */
  url: string | null;
  /** The file holding the bearer token every request needs (0600). */
  tokenFile: string;
  listening: boolean;
  /** Why it is not listening (a taken port, a refused setting), or null. */
  error: string | null;
  /** Where it listens (`127.0.0.1:7767`, `[::1]:7767`). */
  addresses: string[];
  /** Streamable HTTP sessions open. */
  sessions: number;
  /** Legacy HTTP+SSE sessions open. */
  legacySessions: number;
  /** Sessions allowed at once (both kinds). */
  maxSessions: number;
  /** Sessions ended for idling, since the start. */
  expired: number;
  /** Sessions refused at the cap, since the start. */
  refused: number;
  /** SSE readers dropped for not reading, since the start (counted per open session). */
  slowReaders: number;
  /** Bytes of SSE events kept for resumption over all sessions (part of {@link bufferedBytes}). */
  replayBytes: number;
  /**
   * Bytes the front end holds for its clients now, charged to the daemon-wide budget
   * (`mcpd.maxBufferedBytesTotal`, shared with the socket): request bodies arriving, output not yet read,
   * events kept for resumption.
   */
  bufferedBytes: number;
  /** What its bounds dropped since the start. */
  dropped: HttpFrontDropped;
}

/** What the HTTP front end's bounds dropped since the start, by reason. */
export interface HttpFrontDropped {
  /** Responses closed and request bodies refused (503) for holding the most when the daemon-wide budget ran out. */
  overBudget: number;
  /** Times a session's kept events were trimmed to half for holding the most when the budget ran out. */
  replayTrims: number;
  /** SSE events dropped before any reader got them (trimmed from a session's kept events over a bound). */
  droppedEvents: number;
  /** Request bodies refused for passing the body limit (413). */
  bodyTooLarge: number;
  /** Request bodies not finished within `mcpd.http.requestTimeoutMs` of their headers (408). */
  bodyTimeout: number;
  /**
   * Requests refused (429) for coming while as many were being answered at once as one session (2025
   * era), or one TCP connection (2026-era requests, which have no session), may have.
   */
  tooManyRequests: number;
}

export const HTTP_FRONT_STATUS_FIELDS: Fields<HttpFrontStatus> = {
  enabled: "required",
  url: "required",
  tokenFile: "required",
  listening: "required",
  error: "required",
  addresses: "required",
  sessions: "required",
  legacySessions: "required",
  maxSessions: "required",
  expired: "required",
  refused: "required",
  slowReaders: "required",
  replayBytes: "required",
  bufferedBytes: "required",
  dropped: {
    presence: "required",
    fields: {
      overBudget: "required",
      replayTrims: "required",
      droppedEvents: "required",
      bodyTooLarge: "required",
      bodyTimeout: "required",
      tooManyRequests: "required",
    },
  },
};
