import type { Server } from "node:http";
import type { Logger } from "@mcpd/protocol";

/**
 * The TCP connections the HTTP front end holds at once, over both address families, bounded by the
 * daemon's one client connection cap (`mcpd.maxConnections`, less when the open-file limit leaves less
 * room), shared with the Unix socket, whose connections `socketConnections()` counts: together they never
 * hold more descriptors than the cap. Loopback TCP is open to every local user, token or not, so the front
 * end may take at most half of the cap: a flood of TCP connections can neither take every open file of
 * the daemon nor lock the user's own agents out of the socket. Past either bound a new connection is
 * closed at once.
 */
export class ConnectionCap {
  private connections = 0;
  private max = Number.POSITIVE_INFINITY;
  private socketConnections: () => number = () => 0;
  /** Connections closed at once for being over the cap, since start. */
  private refused = 0;

  constructor(private readonly log: Logger) {}

  /** The cap, and how to count the socket's connections. */
  set(max: number, socketConnections: () => number): void {
    this.max = max;
    this.socketConnections = socketConnections;
  }

  /** TCP connections open now. */
  get open(): number {
    return this.connections;
  }

  /** Counts `server`'s connections as they come and go; one past the cap is closed at once. */
  watch(server: Server): void {
    server.on("connection", (socket) => {
      const cap = this.max;
      const socketConnections = this.socketConnections();
      if (this.connections >= Math.floor(cap / 2) || this.connections + socketConnections >= cap) {
        if (this.refused++ % 1000 === 0)
          this.log.warn(
            { connections: this.connections, socketConnections, maxConnections: cap, refused: this.refused },
            "HTTP connection refused: too many open",
          );
        socket.destroy();
        return;
      }
      this.connections++;
      socket.once("close", () => this.connections--);
    });
  }
}
