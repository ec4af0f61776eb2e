/**
 * A real Unix-socket server speaking newline-delimited JSON-RPC, standing in for the daemon in unit
 * tests of the SDK's framing, handshake and reconnection. It answers the handshake like mcpd does and
 * lets each test script any other method. Not a mock of the code under test: the SDK talks to it over a
 * real socket exactly as it talks to mcpd.
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { waitFor as waitUntil } from "../../tests/helpers/process.js";

export type JsonMsg = { jsonrpc?: string; id?: string | number | null; method?: string; params?: any; result?: any; error?: any };

/** Answers a request: a result object, `undefined` for "no answer", or `{ error }` for an error response. */
export type MethodHandler = (params: any, conn: PeerConn, msg: JsonMsg) => unknown;

export class PeerConn {
  readonly received: JsonMsg[] = [];
  constructor(readonly socket: net.Socket) {}
  send(msg: object): void {
    if (!this.socket.destroyed) this.socket.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
  }
  writeRaw(text: string): void {
    this.socket.write(text);
  }
}

export class JsonlPeer {
  readonly connections = new Set<PeerConn>();
  /** Every message from every connection, in arrival order. */
  readonly received: Array<{ conn: PeerConn; msg: JsonMsg }> = [];
  methods: Record<string, MethodHandler> = {};
  private server: net.Server | undefined;

  constructor(readonly socketPath: string) {}

  /** Starts listening (again, after {@link stop}) on the same path. */
  async start(): Promise<void> {
    const server = net.createServer((socket) => {
      const conn = new PeerConn(socket);
      this.connections.add(conn);
      socket.on("close", () => this.connections.delete(conn));
      socket.on("error", () => {});
      let buf = "";
      socket.on("data", (chunk) => {
        buf += chunk.toString("utf8");
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (!line.trim()) continue;
          const msg = JSON.parse(line) as JsonMsg;
          conn.received.push(msg);
          this.received.push({ conn, msg });
          this.handle(conn, msg);
        }
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.socketPath, () => resolve());
    });
    this.server = server;
  }

  /** Stops listening and drops every connection (like a daemon that exits). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const c of this.connections) c.socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Messages of one method, across connections. */
  messages(method: string): JsonMsg[] {
    return this.received.filter((r) => r.msg.method === method).map((r) => r.msg);
  }

  private handle(conn: PeerConn, msg: JsonMsg): void {
    if (msg.method === undefined || msg.id === undefined) return;
    const custom = this.methods[msg.method];
    let out: unknown;
    if (custom) out = custom(msg.params, conn, msg);
    else if (msg.method === "mcpd/select") out = msg.params?.server ? { view: "server", server: msg.params.server } : { view: "aggregate" };
    else if (msg.method === "initialize") {
      out = { protocolVersion: msg.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "mcpd", version: "test" } };
    } else if (msg.method === "ping") out = {};
    else out = { error: { code: -32601, message: `Method not found: ${msg.method}` } };
    void Promise.resolve(out).then((value) => {
      if (value === undefined) return;
      if (typeof value === "object" && value !== null && "error" in value)
        conn.send({ id: msg.id, error: (value as { error: unknown }).error });
      else conn.send({ id: msg.id, result: value });
    });
  }
}

/** A short temp dir (socket paths are limited to ~107 bytes) and a peer listening in it. */
export async function startPeer(): Promise<{ peer: JsonlPeer; dir: string; cleanup: () => Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpdc-"));
  const peer = new JsonlPeer(path.join(dir, "s.sock"));
  await peer.start();
  return {
    peer,
    dir,
    cleanup: async () => {
      await peer.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Polls `check` until it returns a truthy value, up to `timeoutMs` (generous by default): the shared
 * waitFor, on the real clock even while a test fakes the SDK's timers.
 */
export function waitFor<T>(check: () => T | undefined | false | null, what: string, timeoutMs = 20_000): Promise<T> {
  return waitUntil(check, { message: what, timeoutMs }) as Promise<T>;
}
