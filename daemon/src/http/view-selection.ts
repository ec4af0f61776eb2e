import { McpdSelect, type JsonObject } from "@mcpd/protocol";
import type { Session } from "../router/session.js";
import type { ViewChoice } from "./http-routes.js";

/** The request id of the selection mcpd makes itself when an HTTP session opens (its answer never leaves). */
const SELECT_ID = "mcpd-http-select";

/**
 * Chooses an HTTP session's view (aggregate, or one server's) the way a socket client does, with
 * `mcpd/select` as the session's first message. mcpd sends it itself, so no HTTP client can make its
 * session a control connection (that must be a connection's first message). The session's outbound
 * passes every message through {@link intercept} first.
 */
export class ViewSelection {
  private reply: JsonObject | undefined;
  /** Only while the selection is made (the session answers it at once): later, that id is the client's own. */
  private selecting = false;

  /** True (and kept) when `message` is the answer to the selection; it is not the client's to see. */
  intercept(message: object): boolean {
    const m = message as { id?: unknown; method?: unknown };
    if (!this.selecting || m.method !== undefined || m.id !== SELECT_ID) return false;
    this.reply = message as JsonObject;
    return true;
  }

  /** Selects a server's view, a profile, or the aggregate view (`{}`); the error answer when it cannot be chosen. */
  select(session: Session, view: ViewChoice): JsonObject | undefined {
    const params: JsonObject = {};
    if (view.server !== undefined) params.server = view.server;
    if (view.profile !== undefined) params.profile = view.profile;
    if (view.toolSearch !== undefined) params.toolSearch = view.toolSearch;
    this.selecting = true;
    try {
      session.handle({ jsonrpc: "2.0", id: SELECT_ID, method: McpdSelect.method, params });
    } finally {
      this.selecting = false;
    }
    const reply = this.reply;
    this.reply = undefined;
    return reply && "error" in reply ? (reply.error as JsonObject) : undefined;
  }
}
