import type { ServerResponse } from "node:http";
import {
  WireCode,
  isMcpdErrorCode,
  type HttpFrontStatus,
  type JsonObject,
  type JsonRpcErrorObject,
  type Logger,
  type McpdErrorCode,
} from "@mcpd/protocol";
import type { ViewChoice } from "./http-routes.js";
import type { Outbound } from "../router/ports.js";
import type { Router } from "../router/router.js";
import type { Session } from "../router/session.js";
import type { HttpBuffers } from "./http-buffers.js";
import { onGone } from "./http-respond.js";
import { LegacySseSession } from "./legacy-session.js";
import type { Exchange, SessionOwner } from "./streamable-session.js";
import { StreamableSession } from "./streamable-session.js";

/** Bounds of the HTTP front end's sessions. */
export interface HttpSessionLimits {
  /** Sessions (Streamable HTTP and legacy SSE together) open at once; the next initialize gets 503. */
  maxSessions: number;
  /** A Streamable HTTP session with nothing under way for this long ends, in ms (its client gets 404 and starts anew). */
  idleTimeoutMs: number;
  /**
   * ...and one its client has not used since its initialize (not even for `notifications/initialized`, which
   * MCP requires at once), after this many ms (`mcpd.http.requestTimeoutMs`): a client that went away
   * before it could read the answer (and so the session's id) holds no slot for long, even when its going
   * was not seen before the answer left.
   */
  unusedIdleMs: number;
  /** `retry:` advertised on SSE streams, in ms. */
  retryMs: number;
  /** Bytes one response may have waiting for its reader before the reader is dropped. */
  maxOutgoingBytes: number;
  /** Bytes of SSE events kept per session for `Last-Event-ID` resumption. */
  maxReplayBytes: number;
  /** POSTs being answered (and so response streams open) at once in one session; the one over gets 429. */
  maxStreamsPerSession: number;
  /** A call that may run long is switched from JSON to SSE when unanswered after this many ms (0: SSE at once). */
  streamAfterMs: number;
}

/** Why a session could not be opened: the HTTP status and the JSON-RPC error to answer with. */
export interface OpenRefusal {
  status: number;
  error: { code: number; message: string; mcpdCode: McpdErrorCode };
}

/** The view could not be chosen (an unknown server or profile): 404 with the router's own answer. */
function selectRefusal(err: JsonRpcErrorObject): OpenRefusal {
  const data = err.data as { mcpdCode?: unknown } | undefined;
  const mcpdCode = isMcpdErrorCode(data?.mcpdCode) ? data.mcpdCode : "MCPD_UNKNOWN_SERVER";
  return { status: 404, error: { code: Number(err.code), message: String(err.message), mcpdCode } };
}

/**
 * Every session of the HTTP front end: opened on initialize (Streamable HTTP) or on `GET .../sse`
 * (legacy), each a downstream session of the router; bounded in number; ended by DELETE, by the stream
 * closing (legacy), after idling (Streamable HTTP), or at once when its initialize could not be answered.
 * What they hold for their clients (unread output, kept events) is charged to the daemon-wide budget
 * through {@link HttpBuffers}.
 */
export class HttpSessions {
  private readonly router: Router;
  readonly log: Logger;
  limits: HttpSessionLimits;
  private readonly streamables = new Map<string, StreamableSession>();
  private readonly legacies = new Map<string, LegacySseSession>();
  /** Sessions ended for idling, since start. */
  expired = 0;
  /** Sessions refused because the cap was reached, since start. */
  refused = 0;
  /** Readers dropped for not reading by sessions that have ended (legacy sessions end with it). */
  private slowReadersOfEnded = 0;
  readonly buffers: HttpBuffers;
  /** What each Streamable HTTP session needs from the sessions (one object for all). */
  private readonly owner: SessionOwner;

  constructor(router: Router, limits: HttpSessionLimits, log: Logger, buffers: HttpBuffers) {
    this.router = router;
    this.limits = limits;
    this.log = log;
    this.buffers = buffers;
    this.owner = { buffers, initializeLost: (s) => this.end(s, "its client went away before the initialize was answered") };
  }

  get size(): number {
    return this.streamables.size + this.legacies.size;
  }

  streamable(id: string): StreamableSession | undefined {
    return this.streamables.get(id);
  }

  legacy(id: string): LegacySseSession | undefined {
    return this.legacies.get(id);
  }

  private refusal(view: ViewChoice): OpenRefusal | undefined {
    const server = view.server;
    if (this.size >= this.limits.maxSessions) {
      this.refused++;
      return {
        status: 503,
        error: {
          code: WireCode.TooManyConnections,
          message: `Too many sessions: the HTTP front end holds at most ${this.limits.maxSessions} at once; close one (DELETE) and retry`,
          mcpdCode: "MCPD_TOO_MANY_CONNECTIONS",
        },
      };
    }
    if (server !== undefined && !this.router.manager.get(server)) {
      const names = this.router.manager.servers.map((h) => h.name);
      return {
        status: 404,
        error: {
          code: WireCode.InvalidParams,
          message: `Unknown server "${server}"; configured: ${names.length > 0 ? names.join(", ") : "none"}`,
          mcpdCode: "MCPD_UNKNOWN_SERVER",
        },
      };
    }
    return undefined;
  }

  /** A new Streamable HTTP session on `path`, in `view`, or why not. */
  openStreamable(path: string, view: ViewChoice): StreamableSession | OpenRefusal {
    const refused = this.refusal(view);
    if (refused) return refused;
    const s = new StreamableSession(this.router, path, this.limits, this.log, this.owner);
    const refusal = this.chooseView(s.session, view);
    if (refusal) return refusal;
    this.streamables.set(s.id, s);
    return s;
  }

  /**
   * An initialize answered with an error leaves no session behind; nor does one whose answer (and so the
   * session's id, which comes with it) never fully left: its client went away first.
   */
  afterInitialize(s: StreamableSession, exchange: Exchange): void {
    onGone(exchange.res, () => {
      if (s.initializeFailed) this.end(s, "its initialize failed");
      else if (exchange.gone || !exchange.res.writableFinished) this.end(s, "its client went away before the initialize was answered");
    });
  }

  /**
   * A router session for one 2026-era POST (no `Mcp-Session-Id`, nothing kept past its response), its view
   * chosen by `select` (the error answer when it cannot be); ended with {@link closeModern}.
   */
  openModern(outbound: Outbound, view: ViewChoice, token = "main"): Session | OpenRefusal {
    const session = this.router.attach(outbound, "http");
    // A requestState issued to one POST is retried in another, with the same token (held-calls.ts).
    this.router.held.bindTo(session, `http:${token}`);
    return this.chooseView(session, view) ?? session;
  }

  /** Gives a new router session its endpoint's view; when it cannot be chosen, ends the session and says why (404). */
  private chooseView(session: Session, view: ViewChoice): OpenRefusal | undefined {
    const err = session.chooseView(view);
    if (!err) return undefined;
    this.drop(session);
    return selectRefusal(err);
  }

  /** The `inputSchema` of a tool as the endpoint's view names it (for the `Mcp-Param-*` headers of a 2026-era tools/call). */
  toolSchema(view: ViewChoice, tool: string): JsonObject | undefined {
    if (view.server === undefined) return this.router.catalog.tool(tool)?.item.inputSchema as JsonObject | undefined;
    return this.router.manager.get(view.server)?.tools.find((t) => t.name === tool)?.inputSchema as JsonObject | undefined;
  }

  /** A 2026-era POST's response ended: its requests still running are cancelled upstream, its listens end. */
  closeModern(session: Session): void {
    this.drop(session);
  }

  /** A new legacy SSE session streaming on `res`, or why not. */
  openLegacy(res: ServerResponse, view: ViewChoice): LegacySseSession | OpenRefusal {
    const refused = this.refusal(view);
    if (refused) return refused;
    const s = new LegacySseSession(this.router, res, this.limits.maxOutgoingBytes, this.log, this.buffers);
    const refusal = this.chooseView(s.session, view);
    if (refusal) return refusal;
    this.legacies.set(s.id, s);
    onGone(res, () => {
      if (s.slowReader) this.slowReadersOfEnded++;
      this.legacies.delete(s.id);
      s.close();
      this.drop(s.session);
    });
    return s;
  }

  /** Ends a Streamable HTTP session: its streams close and its requests are cancelled upstream. */
  end(s: StreamableSession, reason: string): void {
    if (!this.streamables.delete(s.id)) return;
    this.log.debug({ client: s.session.id, reason }, "HTTP session ended");
    this.slowReadersOfEnded += s.slowReaders;
    s.close();
    this.drop(s.session);
  }

  /** Ends the sessions idle past the limit (never used since their initialize: past the shorter one). */
  sweep(now = Date.now()): void {
    for (const s of this.streamables.values()) {
      const limit = s.used ? this.limits.idleTimeoutMs : this.limits.unusedIdleMs;
      if (!s.busy && now - s.lastActiveAt > limit) {
        this.expired++;
        this.end(s, s.used ? `idle for ${limit} ms` : `not used within ${limit} ms of its initialize`);
      }
    }
  }

  /** Ends every session (shutdown, or the front end turned off). */
  closeAll(): void {
    for (const s of [...this.streamables.values()]) this.end(s, "the HTTP front end stopped");
    for (const s of [...this.legacies.values()]) s.close();
  }

  /** Counts for `mcpd status`. */
  stats(): Pick<
    HttpFrontStatus,
    "sessions" | "legacySessions" | "expired" | "refused" | "slowReaders" | "replayBytes" | "bufferedBytes" | "dropped"
  > {
    let slowReaders = this.slowReadersOfEnded;
    let replayBytes = 0;
    for (const s of this.streamables.values()) {
      slowReaders += s.slowReaders;
      replayBytes += s.replayBytes;
    }
    return {
      sessions: this.streamables.size,
      legacySessions: this.legacies.size,
      expired: this.expired,
      refused: this.refused,
      slowReaders,
      replayBytes,
      bufferedBytes: this.buffers.bytes,
      dropped: { ...this.buffers.dropped },
    };
  }

  private drop(session: StreamableSession["session"]): void {
    this.router.detach(session).catch((err: Error) => this.log.error({ err: err.message }, "detaching an HTTP session failed"));
  }
}
