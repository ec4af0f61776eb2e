import type { IncomingMessage, ServerResponse } from "node:http";
import { WireCode } from "@mcpd/protocol";
import { acceptsSse, sendError } from "./http-respond.js";
import type { ViewChoice } from "./http-routes.js";
import type { HttpSessions } from "./http-sessions.js";
import type { LegacySseSession } from "./legacy-session.js";
import { readMessages, type BodyLimits } from "./request-body.js";

/** `GET .../sse` of the legacy HTTP+SSE transport: opens a session whose every message comes on this stream. */
export function handleLegacyStream(
  req: IncomingMessage,
  res: ServerResponse,
  sessions: HttpSessions,
  view: ViewChoice,
  messagesPath: string,
): void {
  if (!acceptsSse(req, res, false)) return;
  const opened = sessions.openLegacy(res, view);
  if ("status" in opened) {
    sendError(res, opened.status, opened.error.code, opened.error.message, opened.error.mcpdCode);
    return;
  }
  opened.start(messagesPath);
}

/**
 * `POST .../messages?sessionId=...`: one message (or a batch) for a legacy session; its answers come on the
 * stream. `path`: the messages endpoint posted to; a session is reached only through the one its stream named.
 */
export async function handleLegacyPost(
  req: IncomingMessage,
  res: ServerResponse,
  sessions: HttpSessions,
  path: string,
  query: URLSearchParams,
  body: BodyLimits,
): Promise<void> {
  const id = query.get("sessionId");
  const current = (): LegacySseSession | undefined => {
    const s = id === null ? undefined : sessions.legacy(id);
    return s?.messagesPath === path ? s : undefined;
  };
  const notFound = (): void =>
    sendError(
      res,
      404,
      WireCode.InvalidRequest,
      "Session not found: open GET .../sse first and POST to the endpoint it names",
      "MCPD_HTTP_SESSION_NOT_FOUND",
    );
  const session = current();
  if (!session) return notFound();
  const posted = await readMessages(req, res, body);
  if (!posted) return;
  const { messages } = posted;
  // Its stream may have closed while the body arrived: an ended session must not act (a per-client
  // server started for it would never be stopped).
  if (current() !== session) return notFound();
  res.writeHead(202, { "content-type": "text/plain" }).end("Accepted");
  for (const m of messages) session.session.handle(m);
}
