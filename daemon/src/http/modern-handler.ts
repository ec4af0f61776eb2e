import type { IncomingMessage, ServerResponse } from "node:http";
import type { JsonObject, RequestId } from "@mcpd/protocol";
import type { ViewChoice } from "./http-routes.js";
import type { HttpSessions } from "./http-sessions.js";
import { headerRefusal } from "./modern-headers.js";
import { ModernPost, sendRpcError } from "./modern-post.js";

/**
 * A 2026-era POST (see modern-headers.ts `postEra`): a notification is accepted and dropped (202: the era
 * defines none for HTTP; a request is cancelled by closing its response); a request has its headers checked
 * against its body and is then served on a router session of its own (modern-post.ts). No session id is
 * read, minted or echoed.
 */
export function handleModernPost(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: { sessions: HttpSessions; view: ViewChoice },
  message: JsonObject,
  id: RequestId | undefined,
): void {
  if (id === undefined) {
    res.writeHead(202).end();
    return;
  }
  const sessions = ctx.sessions;
  const refused = headerRefusal(req.headers, message, id, (tool) => sessions.toolSchema(ctx.view, tool));
  if (refused) return sendRpcError(res, refused.status, refused.id, refused.error);
  const listen = message.method === "subscriptions/listen";
  new ModernPost(res, id, listen, sessions.limits, sessions.buffers, sessions.log).start(sessions, ctx.view, message);
}
