import {
  JsonLineDecoder,
  claimedVersion,
  encodeLine,
  errorData,
  isModernVersion,
  isObject,
  toModernError,
  wireCodeOf,
  type JsonRpcErrorObject,
} from "@mcpd/protocol/core";
import { CLI_DEFAULTS } from "./cli-defaults.js";

type Id = string | number;

/** The `"id"` at the start of a line too long to parse (the daemon's answers put it first). */
const ID_AT_START = /^\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)/;

/**
 * The requests of the client behind `mcpd connect` that the daemon has not answered yet, read off both
 * directions of the bridge's pipe (which it never alters), so that when the daemon goes away mid-session
 * each of them gets an answer instead of waiting for ever: -32062 `MCPD_CONNECTION_LOST`, as the SDK
 * reports a connection that dropped with a request in flight (a 2026-era request gets -32603 with the
 * codes in `data`, the codes that revision allows).
 */
export class BridgeInFlight {
  /** Keyed by type and value: `1` and `"1"` are different requests. */
  private readonly pending = new Map<string, { id: Id; modern: boolean }>();
  private readonly fromClient: JsonLineDecoder;
  private readonly fromDaemon: JsonLineDecoder;
  private lineOpen = false;
  /** The message of the daemon's last connection-wide error (id null), the likely reason it went. */
  lastRefusal: string | undefined;

  /** @param answeredHere a request the bridge answers itself (never sent to the daemon): not tracked. */
  constructor(answeredHere: (message: unknown) => boolean = () => false) {
    this.fromClient = new JsonLineDecoder({
      onValue: (m) => {
        if (!isObject(m)) return;
        if (typeof m.method === "string" && isId(m.id) && !answeredHere(m)) {
          this.pending.set(keyOf(m.id), { id: m.id, modern: isModernVersion(claimedVersion(m.params)) });
        } else if (m.method === "notifications/cancelled" && isObject(m.params) && isId(m.params.requestId)) {
          // A cancelled request may never be answered.
          this.pending.delete(keyOf(m.params.requestId));
        }
      },
    });
    // The daemon's lines are parsed only up to CLI_DEFAULTS.connectTapMaxLineBytes: a longer one (a big answer) streams past
    // unparsed, its id read off its start (where mcpd's envelope and most servers write it); one whose id
    // comes last stays counted as waiting, and would get a second, error answer only if the daemon went away.
    this.fromDaemon = new JsonLineDecoder({
      maxLineBytes: CLI_DEFAULTS.connectTapMaxLineBytes,
      onValue: (m) => {
        if (!isObject(m) || m.method !== undefined) return;
        if (isId(m.id)) this.pending.delete(keyOf(m.id));
        else if (m.id === null && isObject(m.error) && typeof m.error.message === "string") this.lastRefusal = m.error.message;
      },
      onError: (err) => {
        const id = ID_AT_START.exec(err.preview)?.[1];
        if (id !== undefined) this.pending.delete(keyOf(JSON.parse(id) as Id));
      },
    });
  }

  /** Bytes the client sent (stdin), as they go to the daemon. */
  client(chunk: Buffer): void {
    this.fromClient.push(chunk);
  }

  /** Bytes the daemon sent, as they go to the client (stdout). */
  daemon(chunk: Buffer): void {
    if (chunk.length > 0) this.lineOpen = chunk[chunk.length - 1] !== 0x0a;
    this.fromDaemon.push(chunk);
  }

  /** Answers every request still waiting with `MCPD_CONNECTION_LOST`, on `out`; returns how many. */
  answerAll(out: NodeJS.WritableStream, why: string): number {
    // A line of the daemon's cut short by its exit: end it, so that the answers are lines of their own.
    let text = this.lineOpen ? "\n" : "";
    const error: JsonRpcErrorObject = {
      code: wireCodeOf("MCPD_CONNECTION_LOST"),
      message: `Connection to mcpd lost: ${why}`,
      data: errorData("MCPD_CONNECTION_LOST"),
    };
    const modernError = toModernError(error);
    for (const { id, modern } of this.pending.values()) text += encodeLine({ jsonrpc: "2.0", id, error: modern ? modernError : error });
    const count = this.pending.size;
    this.pending.clear();
    if (text) out.write(text);
    return count;
  }
}

function isId(v: unknown): v is Id {
  return typeof v === "string" || (typeof v === "number" && Number.isFinite(v));
}

function keyOf(id: Id): string {
  return `${typeof id}:${id}`;
}
