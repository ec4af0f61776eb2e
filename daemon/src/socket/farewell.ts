import type { Socket } from "node:net";
import { encodeLine, toWireError, type ConnectionLimitError } from "@mcpd/protocol";

/** A refused or dropped connection gets this long to receive its error line before it is destroyed, in ms. */
const FAREWELL_MS = 1_000;
/** At most this many refused connections wait for their error line at once; more are closed without one. */
const MAX_FAREWELLS = 16;

/**
 * The last lines of connections the socket server closes on its own account (refused over the cap,
 * dropped over a limit). Each waiting farewell holds a descriptor, so at most {@link MAX_FAREWELLS} wait
 * at once: under a storm of refusals the rest are closed without one.
 */
export class Farewells {
  private waiting = 0;

  /** Whether as many farewells wait as may: close the next connection without one. */
  get full(): boolean {
    return this.waiting >= MAX_FAREWELLS;
  }

  /**
   * Sends `error` as the connection's last line (id null) after `pending` (output it was sent this tick),
   * ends it, and destroys it {@link FAREWELL_MS} later. Nothing more is read from it (a client streaming a
   * huge line must not keep the daemon reading garbage). Not destroyed at once: a client that writes after
   * our close would get EPIPE and drop the line unread.
   */
  send(socket: Socket, error: ConnectionLimitError, pending = ""): void {
    this.waiting++;
    socket.once("close", () => this.waiting--);
    socket.pause();
    socket.end(pending + encodeLine({ jsonrpc: "2.0", id: null, error: toWireError(error) }));
    setTimeout(() => socket.destroy(), FAREWELL_MS).unref();
  }
}
