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
  /** Bytes of SSE events kept for resumption over all sessions (within `mcpd.maxBufferedBytesTotal`). */
  replayBytes: number;
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
};
