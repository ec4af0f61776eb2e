/**
 * A minimal JSON-lines client for the daemon's socket: sends requests, matches answers by id. Used by the
 * soak run for control calls (`mcpd/status`), never for the load itself (see load-connection.mjs).
 */
import { connect } from "node:net";

export class LineClient {
  /** @param {import("node:net").Socket} socket */
  constructor(socket) {
    this.socket = socket;
    this.nextId = 1;
    /** @type {Map<number, {resolve: (m: any) => void, reject: (e: Error) => void, timer: NodeJS.Timeout}>} */
    this.pending = new Map();
    this.buf = "";
    socket.setEncoding("utf8");
    socket.on("data", (d) => {
      this.buf += d;
      let i;
      while ((i = this.buf.indexOf("\n")) >= 0) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        if (!line.trim()) continue;
        const m = JSON.parse(line);
        const p = this.pending.get(m.id);
        if (p && ("result" in m || "error" in m)) {
          this.pending.delete(m.id);
          clearTimeout(p.timer);
          p.resolve(m);
        }
      }
    });
    const fail = (err) => {
      for (const p of this.pending.values()) {
        clearTimeout(p.timer);
        p.reject(err);
      }
      this.pending.clear();
    };
    socket.on("error", (err) => fail(err));
    socket.on("close", () => fail(new Error("connection closed")));
  }

  /** @param {string} path @returns {Promise<LineClient>} */
  static open(path) {
    return new Promise((resolve, reject) => {
      const s = connect(path);
      s.once("connect", () => resolve(new LineClient(s)));
      s.once("error", reject);
    });
  }

  /** Sends one request; resolves with the whole answer message. Rejects after `timeoutMs`. */
  request(method, params, timeoutMs = 30_000) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.socket.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) })}\n`);
    });
  }

  /** The result of a request; throws on an error answer. */
  async call(method, params, timeoutMs) {
    const m = await this.request(method, params, timeoutMs);
    if (m.error) throw new Error(`${method}: ${m.error.code} ${m.error.message}`);
    return m.result;
  }

  close() {
    this.socket.destroy();
  }
}
