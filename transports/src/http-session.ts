import { isObject, type JsonObject } from "@mcpd/protocol";

/**
 * The Streamable HTTP session of one {@link HttpTransport}: the `Mcp-Session-Id` the server assigned,
 * the protocol version negotiated by `initialize` (sent as `MCP-Protocol-Version` afterwards) and the
 * `initialize` params, kept to open a new session when the server forgets the old one (404).
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
}
