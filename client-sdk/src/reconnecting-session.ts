import {
  ConnectionLostError,
  DaemonUnavailableError,
  McpdError,
  silentLogger,
  type InitializeResult,
  type JsonObject,
  type Logger,
} from "@mcpd/protocol/core";
import { connectWithHandshake, type HandshakeOptions } from "./connection-handshake.js";
import { CLIENT_DEFAULTS } from "./defaults.js";
import { ReadyWaiters } from "./ready-waiters.js";
import type { RequestOptions, SocketConnection } from "./socket-connection.js";

/** Reconnection policy after the daemon's socket closed. Every duration in ms. */
export interface ReconnectOptions {
  /** First delay, in ms (default {@link CLIENT_DEFAULTS.reconnectInitialDelayMs}); doubles each attempt. */
  initialDelayMs?: number;
  /** Largest delay, in ms (default {@link CLIENT_DEFAULTS.reconnectMaxDelayMs}). */
  maxDelayMs?: number;
  /** Attempts before giving up and closing (default `Infinity`: until `close()`). */
  maxAttempts?: number;
}

/** `connecting` until the first handshake, then `ready`/`reconnecting`, finally `closed`. */
export type SessionState = "idle" | "connecting" | "ready" | "reconnecting" | "closed";

/** What a {@link ReconnectingSession} needs to know and whom it tells. */
export interface ReconnectingSessionOptions extends HandshakeOptions {
  /** Deadline of one connection attempt (socket, select, initialize, `afterHandshake`), in ms. */
  connectTimeoutMs?: number;
  /** `false`: never reconnect; the session closes when the socket does. */
  reconnect?: false | ReconnectOptions;
  maxWaitingCalls?: number;
  logger?: Logger;
  onConnectionLost(error: ConnectionLostError): void;
  onReconnected(attempts: number): void;
  /** Once, when the session closes for good: `error` is set when it gave up reconnecting. */
  onClosed(error: McpdError | undefined): void;
}

/**
 * A connection to the daemon that survives daemon restarts: it performs the handshake (`mcpd/select`,
 * `initialize`, `notifications/initialized`), and when the socket closes it reconnects with exponential
 * backoff and repeats the handshake. Requests in flight when the socket closed fail with
 * `MCPD_CONNECTION_LOST` (never replayed); requests made while disconnected wait for the next connection
 * up to their own timeout, then fail with `MCPD_DAEMON_UNAVAILABLE`.
 */
export class ReconnectingSession {
  private conn: SocketConnection | undefined;
  private stateValue: SessionState = "idle";
  private initResult: InitializeResult | undefined;
  private readonly waiters: ReadyWaiters;
  private lastError: Error | undefined;
  private wakeSleep: (() => void) | undefined;
  private readonly logger: Logger;
  private readonly connectTimeoutMs: number;
  private readonly requestTimeoutMs: number;

  constructor(private readonly options: ReconnectingSessionOptions) {
    this.logger = options.logger ?? silentLogger;
    this.connectTimeoutMs = options.connectTimeoutMs ?? CLIENT_DEFAULTS.connectTimeoutMs;
    this.requestTimeoutMs = options.requestTimeoutMs ?? CLIENT_DEFAULTS.requestTimeoutMs;
    this.waiters = new ReadyWaiters(options.maxWaitingCalls ?? CLIENT_DEFAULTS.maxWaitingCalls, () => this.lastError);
  }

  get state(): SessionState {
    return this.stateValue;
  }

  /** The daemon's answer to the latest `initialize`. */
  get initializeResult(): InitializeResult | undefined {
    return this.initResult;
  }

  /**
   * Connects and performs the handshake. When no daemon answers (`MCPD_DAEMON_UNAVAILABLE`) and
   * `startDaemon` is given, runs it and retries with short delays until the epoch ms it resolves with.
   * Calls made meanwhile wait and go on once connected, or fail with this method's error.
   *
   * @throws `MCPD_DAEMON_UNAVAILABLE` (socket missing/refused), the daemon's handshake error (e.g.
   * `mcpd/select` of an unknown server), its reason for closing the connection (e.g.
   * `MCPD_TOO_MANY_CONNECTIONS`), or `MCPD_CONNECTION_LOST` when {@link close} ran meanwhile (the
   * connection the handshake opened is closed, not kept).
   */
  async open(startDaemon?: () => Promise<number>): Promise<void> {
    if (this.stateValue !== "idle") throw new Error(`Cannot open a session that is ${this.stateValue}`);
    this.stateValue = "connecting";
    try {
      const conn = await this.establishOrStart(startDaemon);
      // close() ran during the handshake: the session stays closed and the new connection goes.
      if (this.stateValue !== "connecting") {
        void conn.close();
        throw new ConnectionLostError("The mcpd client was closed while connecting");
      }
      this.conn = conn;
      this.stateValue = "ready";
      this.waiters.readyAll();
    } catch (err) {
      if (this.stateValue === "connecting") {
        this.stateValue = "idle";
        this.waiters.failAll(err as Error);
      }
      throw err;
    }
  }

  /** Sends a request on the current connection, waiting for a reconnection when there is none. See {@link SocketConnection.request}. */
  request(method: string, params: JsonObject | undefined, options: RequestOptions = {}): Promise<JsonObject> {
    const conn = this.conn;
    if (conn && this.stateValue === "ready") return conn.request(method, params, options);
    return this.whenReady(options).then((remaining) => {
      const c = this.conn;
      if (!c) throw new ConnectionLostError("Connection to mcpd closed");
      return c.request(method, params, { ...options, timeout: remaining });
    });
  }

  /** Sends a notification, waiting for a reconnection when there is none (bounded like a request). */
  async notify(method: string, params?: JsonObject, options: RequestOptions = {}): Promise<void> {
    if (!(this.conn && this.stateValue === "ready")) await this.whenReady(options);
    const c = this.conn;
    if (!c) throw new ConnectionLostError("Connection to mcpd closed");
    c.notify(method, params);
  }

  /** Closes for good: in-flight and waiting calls fail with `MCPD_CONNECTION_LOST`. Idempotent. */
  async close(): Promise<void> {
    if (this.stateValue === "closed") return;
    this.finish(undefined);
    const conn = this.conn;
    this.conn = undefined;
    await conn?.close();
  }

  /** Resolves with the time left of the call's deadline, in ms, once connected. */
  private whenReady(options: RequestOptions): Promise<number> {
    if (this.stateValue === "closed") return Promise.reject(new ConnectionLostError("The mcpd client is closed"));
    if (this.stateValue === "idle")
      return Promise.reject(new ConnectionLostError("The mcpd client is not connected: call connect() first"));
    return this.waiters.wait(options.timeout ?? this.requestTimeoutMs, options.signal);
  }

  private async establishOrStart(startDaemon: (() => Promise<number>) | undefined): Promise<SocketConnection> {
    try {
      return await this.establish();
    } catch (err) {
      if (!startDaemon || !isUnavailable(err) || this.stateValue !== "connecting") throw err;
    }
    const retryUntil = await startDaemon();
    let delay = 50;
    for (;;) {
      if (this.stateValue !== "connecting") throw new ConnectionLostError("The mcpd client was closed while connecting");
      try {
        return await this.establish();
      } catch (err) {
        if (!isUnavailable(err) || Date.now() + delay >= retryUntil) throw err;
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 500);
      }
    }
  }

  private async establish(): Promise<SocketConnection> {
    const { connection, initializeResult } = await connectWithHandshake(this.options, this.connectTimeoutMs, this.logger, (conn, error) =>
      this.onConnectionClosed(conn, error),
    );
    this.initResult = initializeResult;
    return connection;
  }

  private onConnectionClosed(conn: SocketConnection, error: ConnectionLostError): void {
    if (conn !== this.conn || this.stateValue !== "ready") return;
    this.conn = undefined;
    this.lastError = error;
    if (this.options.reconnect === false) {
      this.finish(error);
      return;
    }
    this.stateValue = "reconnecting";
    this.options.onConnectionLost(error);
    void this.reconnectLoop();
  }

  private async reconnectLoop(): Promise<void> {
    const policy = this.options.reconnect || {};
    const maxDelay = policy.maxDelayMs ?? CLIENT_DEFAULTS.reconnectMaxDelayMs;
    const maxAttempts = policy.maxAttempts ?? CLIENT_DEFAULTS.reconnectMaxAttempts;
    let delay = policy.initialDelayMs ?? CLIENT_DEFAULTS.reconnectInitialDelayMs;
    for (let attempt = 1; ; attempt++) {
      await this.sleep(delay);
      if (this.stateValue !== "reconnecting") return;
      try {
        const conn = await this.establish();
        if (this.stateValue !== "reconnecting") {
          void conn.close();
          return;
        }
        this.conn = conn;
        this.stateValue = "ready";
        this.logger.info({ attempts: attempt }, "reconnected to mcpd");
        this.waiters.readyAll();
        this.options.onReconnected(attempt);
        return;
      } catch (err) {
        this.lastError = err as Error;
        // A refused (untrusted) socket is worth a warning: retrying will not fix it by itself.
        const untrusted = err instanceof McpdError && err.code === "MCPD_UNTRUSTED_SOCKET";
        this.logger[untrusted ? "warn" : "debug"]({ attempt, err: (err as Error).message }, "reconnecting to mcpd failed");
        if (attempt >= maxAttempts) {
          const why = `Gave up reconnecting to mcpd after ${attempt} attempts: ${(err as Error).message}`;
          this.finish(new DaemonUnavailableError(why, { cause: err }));
          return;
        }
        delay = Math.min(delay * 2, maxDelay);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wakeSleep = undefined;
        resolve();
      }, ms);
      this.wakeSleep = () => {
        clearTimeout(timer);
        this.wakeSleep = undefined;
        resolve();
      };
    });
  }

  private finish(error: McpdError | undefined): void {
    if (this.stateValue === "closed") return;
    this.stateValue = "closed";
    this.wakeSleep?.();
    const reason = error ?? new ConnectionLostError("The mcpd client is closed");
    this.waiters.failAll(reason);
    this.options.onClosed(error);
  }
}

function isUnavailable(err: unknown): boolean {
  return err instanceof McpdError && err.code === "MCPD_DAEMON_UNAVAILABLE";
}
