import { AuthRequiredError, ServerUnavailableError, hasDeadline, type ServerState } from "@mcpd/protocol";
import type { UpstreamClient } from "./upstream-client.js";
import { isoTime } from "../infra/iso-time.js";

/** What waiting for a server needs from its handle (all public on ServerHandle). */
export interface ReadySubject {
  readonly name: string;
  readonly state: ServerState;
  readonly stateReason: string;
  readonly client: UpstreamClient | undefined;
  readonly lastStderr: string | undefined;
  /** When its next restart attempt is due (Date.now() ms), while `restarting`; undefined otherwise. */
  readonly nextRestartAt: number | undefined;
  start(reason: string): Promise<void>;
  on(event: "state", listener: () => void): unknown;
  off(event: "state", listener: () => void): unknown;
}

/**
 * Whether a request may wait for its server to become ready, and the error that says why it cannot:
 * a `failed` or `disabled` server, or one whose last start failed before it became ready
 * ({@link startFailure}), fails at once; so does a `needs-auth` one, with {@link authRequired}; a stopped
 * one is started on demand.
 */
export class Readiness {
  /**
   * Why the last start failed before the server became ready; cleared when a start succeeds or the
   * server is stopped. While set, requests fail at once instead of waiting for the next restart.
   */
  startFailure: string | undefined;
  /** Why the server is `needs-auth`: requests fail at once with this error (naming `mcpd auth SERVER`). */
  authRequired: AuthRequiredError | undefined;
  private readonly server: ReadySubject;

  constructor(server: ReadySubject) {
    this.server = server;
  }

  /** Whether a request would fail at once rather than wait (see {@link wait}): the server cannot become ready now. */
  get failsAtOnce(): boolean {
    const { state } = this.server;
    return state === "needs-auth" || state === "failed" || state === "disabled" || this.startFailure !== undefined;
  }

  /**
   * Waits until the server is ready, starting it when it is stopped (lazy or idle), bounded by
   * `timeoutMs` and `signal`. A `failed` or `disabled` server fails at once, and so does one whose last
   * start failed before it became ready (its restarts go on; the error says why it failed).
   * @throws ServerUnavailableError (MCPD_SERVER_UNAVAILABLE)
   */
  async wait(timeoutMs: number, signal?: AbortSignal): Promise<UpstreamClient> {
    const server = this.server;
    if (server.state === "needs-auth") throw this.authError();
    if (server.state === "failed" || server.state === "disabled" || this.startFailure !== undefined) throw this.unavailable();
    if (server.state === "stopped") void server.start("started on demand");
    return new Promise<UpstreamClient>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        server.off("state", onState);
        signal?.removeEventListener("abort", onAbort);
      };
      const onState = (): void => {
        if (server.state === "ready" && server.client) {
          done();
          resolve(server.client);
        } else if (server.state === "needs-auth") {
          done();
          reject(this.authError());
        } else if (
          server.state === "failed" ||
          server.state === "disabled" ||
          server.state === "stopped" ||
          this.startFailure !== undefined
        ) {
          done();
          reject(this.unavailable());
        }
      };
      const onAbort = (): void => {
        done();
        reject(signal?.reason);
      };
      const timer = hasDeadline(timeoutMs)
        ? setTimeout(() => {
            done();
            reject(new ServerUnavailableError(server.name, server.state, `not ready after ${timeoutMs} ms${this.detail()}`));
          }, timeoutMs)
        : undefined;
      server.on("state", onState);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted) onAbort();
    });
  }

  /**
   * The state's reason and the last stderr line, each once (the reason often quotes stderr already), and
   * for a server in a restart loop when the next attempt is due: the reason's "restart 2/5 in 3000 ms"
   * counts from when the state was entered, the error from when it is given.
   */
  private why(): string {
    const { stateReason, nextRestartAt } = this.server;
    const parts: string[] = [];
    if (stateReason) parts.push(stateReason);
    const last = this.server.lastStderr;
    if (last && !stateReason.includes(last)) parts.push(`last stderr: ${last}`);
    if (this.server.state === "restarting") {
      parts.push(
        nextRestartAt === undefined
          ? "retrying now"
          : `next retry in ${Math.max(0, nextRestartAt - Date.now())} ms (at ${isoTime(nextRestartAt)})`,
      );
    }
    return parts.join("; ");
  }

  private detail(): string {
    const why = this.why();
    return why ? ` (${why})` : "";
  }

  private authError(): AuthRequiredError {
    return this.authRequired ?? new AuthRequiredError(this.server.name, this.server.stateReason || "authorization needed");
  }

  private unavailable(): ServerUnavailableError {
    return new ServerUnavailableError(this.server.name, this.server.state, this.why() || undefined);
  }
}
