import type { Agent, Dispatcher } from "undici";
import { isObject, type JsonObject } from "@mcpd/protocol";
import { ACCEPT_POST, discardBody, errorText, headerValue } from "./http-wire.js";
import { request } from "./undici.js";

/**
 * The Streamable HTTP session of one {@link HttpTransport}: the `Mcp-Session-Id` the server assigned,
 * the protocol version negotiated by `initialize` (sent as `MCP-Protocol-Version` afterwards) and the
 * `initialize` params, kept to open a new session when the server forgets the old one (404); the POST
 * that carries them ({@link post}) and the DELETE that ends the session ({@link delete}).
 */
export class HttpSession {
  /** The server's `Mcp-Session-Id`, once assigned. */
  id: string | undefined;
  /** The `protocolVersion` of the last `initialize` result. */
  protocolVersion: string | undefined;
  /** The params of the last `initialize` request sent (undefined until one was sent). */
  initializeParams: JsonObject | undefined;
  private healingRun: Promise<void> | undefined;

  /** The re-initialization in progress, if any (new messages wait for it). */
  get healing(): Promise<void> | undefined {
    return this.healingRun;
  }

  /** Records a successful `initialize` result. */
  noteInitializeResult(result: unknown): void {
    if (isObject(result) && typeof result.protocolVersion === "string") this.protocolVersion = result.protocolVersion;
  }

  /**
   * Runs `reinitialize` once for every request that saw session `expiredId` answer 404: concurrent
   * callers share the run in progress; a caller whose session was already replaced returns at once (it
   * simply retries with the new id). Rejects with whatever `reinitialize` threw.
   */
  heal(expiredId: string, reinitialize: () => Promise<void>): Promise<void> {
    if (this.healingRun) return this.healingRun;
    if (this.id !== expiredId) return Promise.resolve();
    // Forget the dead id first: the new initialize must go out without it.
    this.id = undefined;
    this.healingRun = reinitialize().finally(() => {
      this.healingRun = undefined;
    });
    return this.healingRun;
  }

  /** Protocol headers for a message: the session id, and the negotiated version on anything but `initialize`. */
  headers(method: string | undefined): Record<string, string> {
    const out: Record<string, string> = {};
    if (this.id !== undefined) out["mcp-session-id"] = this.id;
    if (this.protocolVersion !== undefined && method !== "initialize") out["mcp-protocol-version"] = this.protocolVersion;
    return out;
  }

  /**
   * Ends session `id` on the server: `DELETE` with its id, bounded by `timeoutMs`. Resolves with the
   * status, or with the error when it failed (the server may be gone; the session dies with it then).
   */
  async delete(
    agent: Agent,
    url: URL,
    headers: Record<string, string>,
    timeoutMs: number,
  ): Promise<{ status: number } | { error: string }> {
    const sessionId = this.id;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const res = await request(url, {
        method: "DELETE",
        headers: { ...headers, ...this.headers(undefined), ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId }) },
        signal: controller.signal,
        dispatcher: agent,
      });
      discardBody(res.body);
      return { status: res.statusCode };
    } catch (err) {
      return { error: errorText(err) };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * POSTs one message with the configured headers and the protocol headers ({@link headers}), and keeps
   * the session id a server assigns to a message sent without one. `legacy`: the session lives in the
   * endpoint's query, so no session header is sent or read. `modern`: a 2026-era request's headers,
   * sent instead of the session's (that era has no session).
   */
  async post(
    agent: Agent,
    url: URL,
    configured: Record<string, string>,
    body: string,
    method: string | undefined,
    signal: AbortSignal,
    legacy: boolean,
    modern?: Record<string, string>,
  ): Promise<Dispatcher.ResponseData> {
    const protocol = modern ?? this.headers(method);
    if (legacy) delete protocol["mcp-session-id"];
    const sentSession = protocol["mcp-session-id"];
    const res = await request(url, {
      method: "POST",
      headers: { ...configured, ...protocol, "content-type": "application/json", accept: ACCEPT_POST },
      body,
      signal,
      dispatcher: agent,
    });
    const assigned = headerValue(res.headers, "mcp-session-id");
    // Only a request without a session can be given one; an answer echoing an old id must not revive it.
    if (!legacy && !modern && assigned && sentSession === undefined) this.id = assigned;
    return res;
  }
}
