import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { WireCode, toModernError, type JsonObject, type RequestId } from "@mcpd/protocol";
import { onGone } from "./http-respond.js";
import type { ViewChoice } from "./http-routes.js";
import type { HttpSessions } from "./http-sessions.js";
import { headerRefusal } from "./modern-headers.js";
import { ModernPost, sendRpcError } from "./modern-post.js";

/** 2026-era requests being answered on each TCP connection (HTTP/1.1 pipelining puts any number on one). */
const answering = new WeakMap<Socket, number>();

/**
 * A 2026-era POST (see modern-headers.ts `postEra`): a notification is accepted and dropped (202: the era
 * defines none for HTTP; a request is cancelled by closing its response); a request has its headers checked
 * against its body and is then served on a router session of its own (modern-post.ts), at most
 * `maxStreamsPerSession` at once per TCP connection (the one over gets 429: without a session, the connection
 * is what bounds one client). No session id is read, minted or echoed.
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
  const socket = req.socket;
  const open = answering.get(socket) ?? 0;
  const cap = sessions.limits.maxStreamsPerSession;
  if (open >= cap) {
    sessions.buffers.dropped.tooManyRequests++;
    const message = `Too many requests being answered at once on this connection (${cap}); wait for some to finish`;
    return sendRpcError(
      res,
      429,
      id,
      toModernError({ code: WireCode.TooManyRequests, message, data: { mcpdCode: "MCPD_TOO_MANY_REQUESTS" } }),
    );
  }
  answering.set(socket, open + 1);
  onGone(res, () => answering.set(socket, (answering.get(socket) ?? 1) - 1));
  const listen = message.method === "subscriptions/listen";
  new ModernPost(res, id, listen, sessions.limits, sessions.buffers, sessions.log).start(sessions, ctx.view, message);
}
