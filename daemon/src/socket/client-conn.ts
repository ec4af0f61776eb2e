import type { Socket } from "node:net";
import type { JsonLineDecoder, Logger } from "@mcpd/protocol";

/** What the server tracks per connection for the daemon-wide bounds. */
export interface ClientConn {
  readonly socket: Socket;
  readonly decoder: JsonLineDecoder;
  log: Logger;
  /** Bytes of memory its unfinished input line keeps alive (the decoder's retainedBytes), as charged to the daemon-wide budget. */
  inBytes: number;
  /** Bytes of its unsent output, as charged to the daemon-wide budget (recounted once per tick it is written to). */
  outBytes: number;
  /** When its unfinished line began (Date.now()); 0 between lines. */
  lineStartedAt: number;
  /** An empty write is queued whose callback recounts the output once everything before it is written. */
  flushWatch: boolean;
  /** Closed, or being closed by the server: no longer counted; nothing more is read from it or sent to it. */
  gone: boolean;
  /** Takes what it sent in this tick and has not written yet (its messages leave together at the end of a tick). */
  takeOutput(): string;
}
