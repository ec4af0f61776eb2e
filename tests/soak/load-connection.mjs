/**
 * One load connection of the soak: keeps `window` calls in flight over the raw socket (pipelined JSON
 * lines, no SDK), cancels some of them, and every few seconds drops the connection with calls in flight
 * and reconnects. Checks every answer as it comes: it must answer a call of this connection, once, with
 * this call's own text; progress must carry a token this connection issued, never after the answer.
 */
import { connect } from "node:net";

/** Counters shared by every connection; `violations` holds the first few problems, described. */
export function newStats() {
  return {
    sent: 0,
    answered: 0,
    cancelled: 0,
    answeredAfterCancel: 0,
    lostToDisconnect: 0,
    disconnects: 0,
    progress: 0,
    errors: 0,
    violationCount: 0,
    /** @type {string[]} */
    violations: [],
  };
}

function violation(stats, text) {
  stats.violationCount++;
  if (stats.violations.length < 20) stats.violations.push(text);
}

/** Hands out calls until the target is reached or the run is stopped. */
export class Budget {
  constructor(target) {
    this.target = target;
    this.taken = 0;
    this.stopped = false;
  }

  take() {
    if (this.stopped || this.taken >= this.target) return false;
    this.taken++;
    return true;
  }
}

export class LoadConnection {
  /**
   * @param {number} index
   * @param {string} socketPath
   * @param {{window: number, disconnectEveryMs: [number, number], cancelRate: number}} opts
   * @param {ReturnType<typeof newStats>} stats
   * @param {Budget} budget
   * @param {() => number} rng uniform in [0, 1)
   */
  constructor(index, socketPath, opts, stats, budget, rng) {
    this.index = index;
    this.socketPath = socketPath;
    this.opts = opts;
    this.stats = stats;
    this.budget = budget;
    this.rng = rng;
    this.running = false;
    this.generation = 0;
    this.socket = undefined;
    this.disconnectTimer = undefined;
    this.reset();
  }

  reset() {
    /** @type {Map<number | string, {kind: string, text?: string, token?: string}>} */
    this.inflight = new Map();
    /** Cancelled calls: id -> whether an answer (sent before the cancel arrived) was already seen. */
    this.cancelled = new Map();
    /** Progress tokens: token -> "inflight" | "cancelled" | "done". */
    this.tokens = new Map();
    this.nextId = 1;
    this.buf = "";
  }

  start() {
    this.running = true;
    this.open();
  }

  open() {
    const gen = ++this.generation;
    this.reset();
    const socket = connect(this.socketPath);
    this.socket = socket;
    socket.setEncoding("utf8");
    socket.on("error", () => {});
    socket.on("data", (d) => {
      if (gen === this.generation) this.onData(d);
    });
    socket.on("close", () => {
      if (gen !== this.generation || !this.running) return;
      violation(this.stats, `connection ${this.index} was closed by the daemon`);
      this.open();
    });
    socket.once("connect", () => {
      if (gen !== this.generation) return;
      const lines = [
        `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"soak-${this.index}","version":"1"}}}`,
      ];
      // Half the sessions subscribe to a resource: the subscription table must be empty again at the end.
      // Both fixtures list fixture://static/one, so the aggregate view addresses server a's copy by its
      // namespaced URI (a plain URI two servers list is refused as ambiguous).
      if (this.rng() < 0.5)
        lines.push(`{"jsonrpc":"2.0","id":"sub","method":"resources/subscribe","params":{"uri":"mcpd://a/fixture://static/one"}}`);
      socket.write(`${lines.join("\n")}\n`);
      this.topUp();
    });
    clearTimeout(this.disconnectTimer);
    const [lo, hi] = this.opts.disconnectEveryMs;
    this.disconnectTimer = setTimeout(() => this.disconnect(), lo + this.rng() * (hi - lo));
  }

  /** Drops the connection with whatever is in flight, and reconnects. */
  disconnect() {
    if (!this.running) return;
    this.stats.disconnects++;
    this.stats.lostToDisconnect += this.inflight.size;
    this.generation++;
    this.socket?.destroy();
    this.open();
  }

  request() {
    const id = this.rng() < 0.1 ? `s${this.nextId++}` : this.nextId++;
    const text = `c${this.index}-${id}`;
    const r = this.rng();
    let entry;
    let params;
    if (r < 0.8) {
      entry = { kind: "echo", text };
      params = { name: this.rng() < 0.5 ? "a__echo" : "b__echo", arguments: { text } };
    } else if (r < 0.88) {
      entry = { kind: "routed", text };
      params = { name: "echo", arguments: { text }, _meta: { "mcpd/server": "b" } };
    } else if (r < 0.94) {
      entry = { kind: "slow", text };
      params = { name: "a__slow", arguments: { ms: 1 + Math.floor(this.rng() * 20), text } };
    } else if (r < 0.98) {
      const token = `t${id}`;
      entry = { kind: "progress", token };
      this.tokens.set(token, "inflight");
      params = { name: "b__progress", arguments: { steps: 2, intervalMs: 1 }, _meta: { progressToken: token } };
    } else {
      entry = { kind: "ping" };
    }
    this.inflight.set(id, entry);
    this.stats.sent++;
    return JSON.stringify({ jsonrpc: "2.0", id, method: entry.kind === "ping" ? "ping" : "tools/call", ...(params ? { params } : {}) });
  }

  topUp() {
    if (!this.running || !this.socket || this.socket.connecting) return;
    const lines = [];
    while (this.inflight.size < this.opts.window && this.budget.take()) lines.push(this.request());
    if (lines.length > 0) this.socket.write(`${lines.join("\n")}\n`);
  }

  onData(d) {
    this.buf += d;
    let start = 0;
    let i;
    while ((i = this.buf.indexOf("\n", start)) >= 0) {
      const line = this.buf.slice(start, i);
      start = i + 1;
      if (line) this.onMessage(JSON.parse(line));
    }
    this.buf = this.buf.slice(start);
    this.maybeCancel();
    this.topUp();
  }

  onMessage(m) {
    const s = this.stats;
    if (m.method !== undefined) {
      if (m.method !== "notifications/progress") return;
      const state = this.tokens.get(m.params?.progressToken);
      if (state === undefined) violation(s, `connection ${this.index}: progress under a token it never issued: ${JSON.stringify(m)}`);
      else if (state === "done") violation(s, `connection ${this.index}: progress after the answer: ${JSON.stringify(m)}`);
      else s.progress++;
      return;
    }
    if (m.id === "init" || m.id === "sub") {
      if (m.error) violation(s, `connection ${this.index}: ${m.id} failed: ${JSON.stringify(m.error)}`);
      return;
    }
    const entry = this.inflight.get(m.id);
    if (entry) {
      this.inflight.delete(m.id);
      s.answered++;
      if (entry.token) this.tokens.set(entry.token, "done");
      if (m.error) {
        s.errors++;
        violation(s, `connection ${this.index}: ${entry.kind} ${JSON.stringify(m.id)} failed: ${JSON.stringify(m.error)}`);
      } else if (entry.text !== undefined && m.result?.content?.[0]?.text !== entry.text) {
        violation(s, `connection ${this.index}: ${JSON.stringify(m.id)} answered with someone else's text: ${JSON.stringify(m.result)}`);
      }
      return;
    }
    const seen = this.cancelled.get(m.id);
    if (seen === false) {
      // Answered before the cancel reached the daemon: allowed, once.
      this.cancelled.set(m.id, true);
      s.answeredAfterCancel++;
      return;
    }
    violation(
      s,
      `connection ${this.index}: ${seen ? "second answer" : "answer to an id it has no call for"}: ${JSON.stringify(m).slice(0, 300)}`,
    );
  }

  maybeCancel() {
    if (this.inflight.size === 0 || this.rng() >= this.opts.cancelRate) return;
    // Cancel a call that is likely still upstream: a slow or progress one when there is one.
    let pick;
    for (const [id, e] of this.inflight) {
      pick = id;
      if (e.kind === "slow" || e.kind === "progress") break;
    }
    const entry = this.inflight.get(pick);
    this.inflight.delete(pick);
    this.cancelled.set(pick, false);
    if (entry.token) this.tokens.set(entry.token, "cancelled");
    this.stats.cancelled++;
    this.socket.write(
      `${JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: pick, reason: "soak" } })}\n`,
    );
  }

  /** Stops issuing calls; resolves once nothing is in flight (bounded by `timeoutMs`). */
  async drain(timeoutMs) {
    clearTimeout(this.disconnectTimer);
    const deadline = Date.now() + timeoutMs;
    while (this.inflight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.inflight.size;
  }

  close() {
    this.running = false;
    clearTimeout(this.disconnectTimer);
    this.generation++;
    this.socket?.destroy();
  }
}
