import type { IncomingMessage, ServerResponse } from "node:http";
import { SUPPORTED_PROTOCOL_VERSIONS, WireCode, classify, isObject, type JsonObject, type RequestId } from "@mcpd/protocol";
import { accepts, acceptsSse, onGone, sendError } from "./http-respond.js";
import type { ViewChoice } from "./http-routes.js";
import type { HttpSessions } from "./http-sessions.js";
import { handleModernPost } from "./modern-handler.js";
import { postEra } from "./modern-headers.js";
import { sendRpcError } from "./modern-post.js";
import { readMessages, type BodyLimits } from "./request-body.js";
import { parseEventId } from "./sse-stream.js";
import type { Exchange, StreamableSession } from "./streamable-session.js";

/** The header carrying a Streamable HTTP session's id. */
export const SESSION_HEADER = "mcp-session-id";

/** What one request to a Streamable HTTP endpoint is served with. */
export interface EndpointContext {
  sessions: HttpSessions;
  /** The endpoint's path (`/mcp`, `/servers/<name>/mcp`). */
  path: string;
  /** The view it serves: one server's, a profile's, or the aggregate view. */
  view: ViewChoice;
  /** The bounds a POST's body is read within. */
  body: BodyLimits;
}

/**
 * Requests that may run long and produce notifications or server-to-client requests before their answer
 * (progress, log messages, sampling, elicitation): answered as JSON when the answer comes within
 * `mcpd.http.streamAfterMs` (50 ms), else switched to a primed (resumable) SSE stream then. Anything else
 * is answered as JSON, switched to SSE only if something does come for it first. Either way, something
 * for the request before its answer switches it at once. A client that accepts only SSE always gets SSE.
 */
const STREAMED_METHODS: ReadonlySet<string> = new Set(["tools/call", "prompts/get", "resources/read", "completion/complete"]);

const bad = (res: ServerResponse, status: number, message: string): void =>
  sendError(res, status, WireCode.InvalidRequest, message, "MCPD_PROTOCOL_VIOLATION");

/**
 * The session a request names, checked: 400 without the header, 404 for one that does not exist (or
 * expired, or was opened on another endpoint) so the client starts a new one, 400 for a protocol version
 * mcpd does not speak.
 */
function sessionOf(req: IncomingMessage, res: ServerResponse, ctx: EndpointContext): StreamableSession | undefined {
  const id = req.headers[SESSION_HEADER];
  if (typeof id !== "string" || id === "") {
    bad(res, 400, `Bad Request: the ${SESSION_HEADER} header is required (send initialize first to open a session)`);
    return undefined;
  }
  const s = ctx.sessions.streamable(id);
  if (!s || s.path !== ctx.path) {
    sendError(
      res,
      404,
      WireCode.InvalidRequest,
      "Session not found: it ended or expired; send initialize to start a new one",
      "MCPD_HTTP_SESSION_NOT_FOUND",
    );
    return undefined;
  }
  const version = req.headers["mcp-protocol-version"];
  if (typeof version === "string" && !(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
    bad(
      res,
      400,
      `Bad Request: unsupported MCP-Protocol-Version "${version.slice(0, 40)}" (mcpd speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
    );
    return undefined;
  }
  s.used = true;
  return s;
}

/**
 * A POST's media types checked (415 unless JSON is sent, 406 unless JSON or SSE is accepted): which of
 * JSON and SSE its client accepts, or undefined once answered.
 */
function postTypes(req: IncomingMessage, res: ServerResponse): { json: boolean; sse: boolean } | undefined {
  const type = req.headers["content-type"];
  if (typeof type !== "string" || !/^application\/json\s*(;|$)/i.test(type)) {
    sendError(
      res,
      415,
      WireCode.InvalidRequest,
      "Unsupported Media Type: send the message as Content-Type: application/json",
      "MCPD_PROTOCOL_VIOLATION",
    );
    return undefined;
  }
  const accept = req.headers.accept;
  const json = accepts(accept, "application/json");
  const sse = accepts(accept, "text/event-stream");
  if (json || sse) return { json, sse };
  sendError(res, 406, WireCode.InvalidRequest, "Not Acceptable: accept application/json and text/event-stream", "MCPD_PROTOCOL_VIOLATION");
  return undefined;
}

/** POST: one JSON-RPC message or a batch; requests are answered as JSON or an SSE stream, the rest with 202. */
export async function handlePost(req: IncomingMessage, res: ServerResponse, ctx: EndpointContext): Promise<void> {
  const types = postTypes(req, res);
  if (!types) return;
  const { json, sse } = types;
  const posted = await readMessages(req, res, ctx.body);
  if (!posted) return;
  const era = postEra(req.headers, posted.messages, posted.batch);
  if ("refuse" in era) return sendRpcError(res, era.refuse.status, era.refuse.id, era.refuse.error);
  if (era.era === "2026") return handleModernPost(req, res, ctx, era.message, era.id);
  const { messages, batch } = posted;
  // Only an initialize *request* opens a session: its id goes back with the answer, and nothing else has one.
  const isInit = messages.some((m) => classify(m) === "request" && (m as JsonObject).method === "initialize");
  let session: StreamableSession | undefined;
  const headers: Record<string, string> = {};
  if (isInit) {
    if (messages.length > 1) return bad(res, 400, "Invalid Request: initialize must be sent on its own");
    if (typeof req.headers[SESSION_HEADER] === "string")
      return bad(res, 400, "Invalid Request: initialize opens a new session; send it without Mcp-Session-Id");
    const opened = ctx.sessions.openStreamable(ctx.path, ctx.view);
    if ("status" in opened) return sendError(res, opened.status, opened.error.code, opened.error.message, opened.error.mcpdCode);
    session = opened;
    headers[SESSION_HEADER] = session.id;
  } else {
    session = sessionOf(req, res, ctx);
    if (!session) return;
  }
  const ids = new Set<RequestId>();
  const progress = new Map<RequestId, string | number>();
  for (const m of messages) {
    if (classify(m) !== "request") continue;
    const r = m as { id: RequestId; params?: unknown };
    if (ids.has(r.id) || session.has(r.id))
      return bad(res, 400, `Invalid Request: request id ${JSON.stringify(r.id)} is already in flight in this session`);
    ids.add(r.id);
    const token = isObject(r.params) && isObject(r.params._meta) ? r.params._meta.progressToken : undefined;
    if (typeof token === "string" || typeof token === "number") progress.set(r.id, token);
  }
  if (ids.size === 0) {
    res.writeHead(202).end();
    for (const m of messages) session.receive(m);
    return;
  }
  if (session.openExchanges >= session.limits.maxStreamsPerSession) {
    ctx.sessions.buffers.dropped.tooManyRequests++;
    sendError(
      res,
      429,
      WireCode.TooManyRequests,
      `Too many requests being answered at once in this session (${session.limits.maxStreamsPerSession}); wait for some to finish`,
      "MCPD_TOO_MANY_REQUESTS",
    );
    return;
  }
  const exchange: Exchange = {
    res,
    ids,
    answers: [],
    batch,
    sse: !sse ? "never" : !json ? "always" : "allowed",
    streamAfterMs: messages.some((m) => STREAMED_METHODS.has((m as JsonObject).method as string))
      ? session.limits.streamAfterMs
      : undefined,
    headers,
    gone: false,
    initialize: isInit,
  };
  session.begin(exchange, progress);
  for (const m of messages) session.receive(m);
  if (isInit) ctx.sessions.afterInitialize(session, exchange);
}

/** GET: the standalone SSE stream for server-initiated messages, or a dropped stream resumed with Last-Event-ID. */
export function handleGet(req: IncomingMessage, res: ServerResponse, ctx: EndpointContext): void {
  if (!acceptsSse(req, res, true)) return;
  const session = sessionOf(req, res, ctx);
  if (!session) return;
  session.lastActiveAt = Date.now();
  // The session is busy while the stream is open, and idle only from its end (however long it was open).
  onGone(res, () => {
    session.lastActiveAt = Date.now();
  });
  const last = req.headers["last-event-id"];
  const resume = parseEventId(typeof last === "string" ? last : undefined);
  const stream = resume ? session.stream(resume.stream) : undefined;
  if (resume && stream) {
    stream.attach(res, resume.seq, false);
    onGone(res, () => session.settle(stream));
    session.settle(stream);
    return;
  }
  if (session.standalone.attached) {
    sendError(res, 409, WireCode.InvalidRequest, "Conflict: this session already has its GET stream open", "MCPD_PROTOCOL_VIOLATION");
    return;
  }
  session.standalone.attach(res);
}

/** DELETE: the client ends its session. */
export function handleDelete(req: IncomingMessage, res: ServerResponse, ctx: EndpointContext): void {
  const session = sessionOf(req, res, ctx);
  if (!session) return;
  ctx.sessions.end(session, "ended by the client (DELETE)");
  res.writeHead(200, { "content-type": "application/json" }).end("{}");
}
