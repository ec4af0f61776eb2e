/** Defaults of the transport layer, in one place. Units are in the names. */
export const TRANSPORT_DEFAULTS = {
  /** Request deadline when neither the call nor the config sets one. */
  requestTimeoutMs: 30_000,
  /** Largest message accepted from a server, in bytes (newline-delimited line, HTTP body, WS frame). */
  maxMessageBytes: 4 * 1024 * 1024,
  /** stderr lines kept per stdio server. */
  stderrMaxLines: 200,
  /** stderr bytes kept per stdio server. */
  stderrMaxBytes: 64 * 1024,
  /** Bytes allowed to wait for `drain` on a child's stdin before new requests are refused. */
  maxPendingWriteBytes: 16 * 1024 * 1024,
  /** close(): wait this long after ending stdin before SIGTERM, and after SIGTERM before SIGKILL. */
  closeGraceMs: 2_000,
  /**
   * stdio: after an unexpected exit or end of stdout, wait at most this long for the rest of the
   * child's output and its exit status before failing pending requests (they fail within ~this of the exit).
   */
  exitSettleMs: 50,
  /**
   * stdio: stderr lines quoted in the reason of a `Transport closed: ...` error after a crash (blank
   * lines skipped); when one of the last 40 lines states an error (`Error: ...`), that line alone.
   */
  closeReasonStderrLines: 3,
  /** HTTP: deadline for the DELETE sent on close. */
  deleteTimeoutMs: 2_000,
  /** HTTP: attempts to resume a dropped SSE reply stream with Last-Event-ID before failing. */
  sseResumeAttempts: 3,
  /**
   * HTTP: first and largest delay of the background listener's reconnect backoff; the largest also caps
   * the `retry:` a server asks for before an SSE reply is resumed.
   */
  listenerInitialDelayMs: 500,
  listenerMaxDelayMs: 30_000,
  /**
   * HTTP: keep-alive connections per origin. Each request answered with an SSE stream holds one for its
   * whole life, so this matches the daemon's default `maxConcurrency` (64) plus the listener.
   */
  httpConnections: 65,
  /** HTTP: idle keep-alive sockets are closed after this many ms (undici `keepAliveTimeout`). */
  httpKeepAliveMs: 4_000,
  /** HTTP: delay before resuming a dropped SSE reply stream when the server sent no `retry:`. */
  sseResumeDelayMs: 500,
  /**
   * HTTP: event ids of one SSE reply remembered (the latest), so that an event a resumed stream replays
   * (a server that resumes from `Last-Event-ID` inclusive) is skipped instead of delivered twice.
   */
  sseReplayIdsKept: 256,
  /**
   * HTTP: once the response arrived on an SSE reply stream, the rest of that stream (late notifications)
   * may keep its connection this long before it is closed.
   */
  sseDrainGraceMs: 5_000,
  /** HTTP: bytes of an error response body kept in `HttpError` (the rest is discarded unread). */
  httpErrorBodyMaxBytes: 4 * 1024,
  /** OAuth: deadline of one request to an authorization server or a metadata endpoint. */
  oauthRequestTimeoutMs: 30_000,
  /** OAuth: largest metadata document or token response read, in bytes. */
  oauthMaxBodyBytes: 256 * 1024,
  /** OAuth: how long the loopback listener waits for the browser's redirect after sending the user there. */
  oauthAuthorizationTimeoutMs: 300_000,
  /**
   * OAuth: an access token is refreshed (ahead: the request goes out with it meanwhile) when a request
   * finds it this close to its expiry (or a fifth of its lifetime, if that is less), so it never expires
   * in flight.
   */
  oauthRefreshMarginMs: 60_000,
  /**
   * OAuth: step-up authorizations (403 `insufficient_scope`) one request may start before it fails; with
   * the first authorization after a 401, at most three authorizations per request.
   */
  oauthStepUpAttempts: 2,
  /**
   * OAuth: attempts of one refresh that fails for a passing reason (network, 5xx,
   * `temporarily_unavailable`) before the requests waiting for it (only those of an expired token) fail;
   * the tokens are kept either way.
   */
  oauthRefreshAttempts: 4,
  /**
   * OAuth: the wait before the second refresh attempt, doubled before each further one, in ms; after the
   * last attempt failed, the next refresh of a token not yet expired waits one more doubling (16 s).
   */
  oauthRefreshBackoffMs: 1_000,
  /** OAuth: lifetime of a `private_key_jwt` client assertion. */
  oauthAssertionLifetimeMs: 300_000,
} as const;
