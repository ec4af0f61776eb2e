import type { Agent } from "undici";
import { PROTOCOL_DEFAULTS, ProtocolError, TransportClosedError, quote, sseJson, type Logger, type ParseError } from "@mcpd/protocol";
import { readSseStream, type SseCursor } from "./read-sse-stream.js";
import { ACCEPT_SSE, discardBody, errorText, httpErrorFrom, mediaType } from "./http-wire.js";
import { urlLabel } from "../url-label.js";
import { request } from "./undici.js";

/** What a {@link LegacySseConnection} needs from its transport. */
export interface LegacySseDeps {
  url: URL;
  agent: Agent;
  /** Headers for the GET (configured headers). */
  headers: () => Record<string, string> | Promise<Record<string, string>>;
  maxEventBytes: number;
  log: Logger;
  /** Each parsed `message` event. */
  onMessage: (value: unknown) => void;
  /** An event whose data is not JSON; the stream goes on. */
  onParseError: (error: ParseError) => void;
  /** The stream ended or broke after the endpoint arrived. Not called after {@link LegacySseConnection.close}. */
  onEnd: (reason: string, cause?: unknown) => void;
}

/**
 * The GET side of the legacy HTTP+SSE transport (MCP 2024-11-05): one long-lived `GET <url>` stream whose
 * first `endpoint` event names where to POST messages, and whose `message` events carry every response,
 * notification and server request.
 *
 * The endpoint is resolved against the URL and must have the same origin (scheme, host, port): a server
 * must not be able to send our messages, and the configured headers (often credentials), elsewhere.
 */
export class LegacySseConnection {
  private readonly controller = new AbortController();
  private endpointUrl: URL | undefined;
  /** open() returned: from now on the end of the stream is reported through onEnd. */
  private opened = false;
  /** Why the stream ended, when it ended before open() returned. */
  private endedEarly: TransportClosedError | undefined;
  private closed = false;

  constructor(private readonly deps: LegacySseDeps) {}

  /** Where messages are POSTed. Set once {@link open} resolved. */
  get endpoint(): URL {
    if (!this.endpointUrl) throw new TransportClosedError("legacy SSE endpoint not known yet");
    return this.endpointUrl;
  }

  /** The `sessionId` query parameter of the endpoint, which legacy servers use as the session id. */
  get sessionId(): string | undefined {
    return this.endpointUrl?.searchParams.get("sessionId") ?? undefined;
  }

  /**
   * Opens the GET stream and waits for the `endpoint` event.
   * @throws HttpError (`MCPD_HTTP_ERROR`) for a non-2xx answer; ProtocolError (`MCPD_PROTOCOL_VIOLATION`)
   *   when the answer is not an event stream, the stream ends before an endpoint, or the endpoint is on
   *   another origin; `signal.reason` when `signal` aborts first (deadline); the network error otherwise.
   */
  async open(signal: AbortSignal): Promise<URL> {
    const { url, agent, log } = this.deps;
    const safeUrl = urlLabel(url);
    const onAbort = (): void => this.controller.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    try {
      const res = await request(url, {
        method: "GET",
        headers: { ...(await this.deps.headers()), accept: ACCEPT_SSE },
        signal: this.controller.signal,
        dispatcher: agent,
      });
      if (res.statusCode < 200 || res.statusCode > 299) throw await httpErrorFrom(res.statusCode, res.headers, res.body);
      const type = mediaType(res.headers);
      if (type !== "text/event-stream") {
        discardBody(res.body);
        throw new ProtocolError(
          `GET ${safeUrl} answered ${type || "no content type"}, not text/event-stream: not a legacy HTTP+SSE endpoint`,
        );
      }
      let gotEndpoint!: (endpoint: URL) => void;
      let failEndpoint!: (error: unknown) => void;
      const endpoint = new Promise<URL>((resolve, reject) => {
        gotEndpoint = resolve;
        failEndpoint = reject;
      });
      const cursor: SseCursor = { events: 0 };
      const done = readSseStream(res.body, {
        cursor,
        maxEventBytes: this.deps.maxEventBytes,
        onEvent: (event) => {
          if (event.event === "endpoint") {
            if (!this.endpointUrl) {
              const resolved = this.resolveEndpoint(event.data, safeUrl);
              this.endpointUrl = resolved;
              gotEndpoint(resolved);
            }
            return;
          }
          if (event.event !== undefined && event.event !== "message") {
            log.debug({ url: safeUrl, event: event.event }, "ignored legacy SSE event");
            return;
          }
          let value: unknown;
          try {
            value = sseJson(event);
          } catch (err) {
            this.deps.onParseError(err as ParseError);
            return;
          }
          this.deps.onMessage(value);
        },
      });
      done.then(
        () => this.ended(`legacy SSE stream from ${safeUrl} ended`, undefined, failEndpoint),
        (err: unknown) => this.ended(`legacy SSE stream from ${safeUrl} failed: ${errorText(err)}`, err, failEndpoint),
      );
      const resolved = await endpoint;
      if (this.endedEarly) throw this.endedEarly;
      this.opened = true;
      log.debug({ url: safeUrl, endpoint: urlLabel(resolved) }, "legacy SSE endpoint received");
      return resolved;
    } catch (err) {
      this.controller.abort(err);
      throw signal.aborted ? signal.reason : err;
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** Ends the GET stream. Idempotent; `onEnd` is not called. */
  close(): void {
    this.closed = true;
    this.controller.abort(new TransportClosedError("closed by client"));
  }

  private resolveEndpoint(data: string, safeUrl: string): URL {
    let endpoint: URL;
    try {
      endpoint = new URL(data.trim(), this.deps.url);
    } catch (err) {
      throw new ProtocolError(
        `legacy SSE endpoint event from ${safeUrl} is not a URI: ${JSON.stringify(quote(data, PROTOCOL_DEFAULTS.quotedTextChars))}`,
        {
          cause: err,
        },
      );
    }
    if (endpoint.origin !== this.deps.url.origin) {
      throw new ProtocolError(
        `legacy SSE endpoint ${urlLabel(endpoint)} from ${safeUrl} is on another origin ` +
          `(${endpoint.origin}, expected ${this.deps.url.origin}); refused`,
      );
    }
    return endpoint;
  }

  private ended(reason: string, cause: unknown, failEndpoint: (error: unknown) => void): void {
    if (!this.endpointUrl) {
      // Still opening: open() reports it (a thrown endpoint error or a stream that ended too early).
      failEndpoint(cause ?? new ProtocolError(`${reason} before sending an endpoint event`));
      return;
    }
    if (this.closed || this.controller.signal.aborted) return;
    if (!this.opened) {
      this.endedEarly = new TransportClosedError(reason, { cause });
      return;
    }
    this.closed = true;
    this.deps.onEnd(reason, cause);
  }
}
