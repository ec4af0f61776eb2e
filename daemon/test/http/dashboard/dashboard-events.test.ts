/**
 * The dashboard's live stream does no work while no page watches (issue 36, "nothing computed per call
 * for the dashboard when no one watches"): it subscribes to the servers' events, and reads the status, the
 * log and the counters, only while a page is open, and stops when the last one goes. Over a real HTTP
 * server on 127.0.0.1 port 0; the source is the stream's port, counted.
 */
import { createServer, get, type IncomingMessage, type Server } from "node:http";
import { silentLogger } from "@mcpd/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { DashboardEvents, type EventSource } from "../../../src/http/dashboard/dashboard-events.js";
import type { ManagerListener } from "../../../src/supervision/manager.js";
import { waitFor } from "../../../../tests/helpers/process.js";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/** A source that counts what the stream asks of it. */
function countingSource() {
  const counts = { watching: 0, status: 0, logs: 0, figures: 0 };
  let listener: ManagerListener | undefined;
  const source: EventSource = {
    status: async () => {
      counts.status++;
      return { servers: [] };
    },
    logs: async () => {
      counts.logs++;
      return ["a line"];
    },
    watch: (l) => {
      counts.watching++;
      listener = l;
      return () => {
        counts.watching--;
        listener = undefined;
      };
    },
    figures: () => {
      counts.figures++;
      return { bounds: [], servers: [] };
    },
  };
  return { source, counts, listener: () => listener };
}

/** Opens the stream and resolves once its first `status` event came, with the response to end it by. */
function openPage(port: number): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    get({ host: "127.0.0.1", port, path: "/" }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      const onData = (c: string): void => {
        text += c;
        if (text.includes("event: status\n")) {
          res.off("data", onData);
          res.resume();
          resolve(res);
        }
      };
      res.on("data", onData);
    }).on("error", reject);
  });
}

describe("DashboardEvents", () => {
  it("watches and reads nothing while no page is open, and stops when the last page goes", async () => {
    const { source, counts, listener } = countingSource();
    const events = new DashboardEvents(source, silentLogger);
    server = createServer((_req, res) => events.open(res, () => true));
    await new Promise<void>((r) => server?.listen(0, "127.0.0.1", () => r()));
    const port = (server.address() as { port: number }).port;
    expect(counts).toEqual({ watching: 0, status: 0, logs: 0, figures: 0 });

    const first = await openPage(port);
    const second = await openPage(port);
    expect(counts.watching).toBe(1);
    expect(counts.status).toBeGreaterThanOrEqual(1);
    expect(counts.figures).toBe(counts.status);

    first.destroy();
    second.destroy();
    await waitFor(() => counts.watching === 0, { message: "the stream to stop watching when the last page went" });
    expect(listener()).toBeUndefined();

    // A page opened again starts it again; shutdown ends it.
    await openPage(port);
    expect(counts.watching).toBe(1);
    events.close();
    expect(counts.watching).toBe(0);
  });

  it("regression: a stream whose login session no longer opens the dashboard is ended at the next push, the others go on (it kept getting the status and the log)", async () => {
    const { source, listener } = countingSource();
    const events = new DashboardEvents(source, silentLogger);
    let firstLive = true;
    let opened = 0;
    server = createServer((_req, res) => {
      const mine = ++opened === 1;
      events.open(res, () => (mine ? firstLive : true));
    });
    await new Promise<void>((r) => server?.listen(0, "127.0.0.1", () => r()));
    const port = (server.address() as { port: number }).port;
    const first = await openPage(port);
    const second = await openPage(port);
    const ended = new Promise<void>((r) => first.once("end", () => r()));
    firstLive = false; // expired, or let go for newer logins
    let more = "";
    second.on("data", (c: string) => (more += c));
    listener()?.state?.({} as never, {} as never);
    await ended;
    await waitFor(() => more.includes("event: status\n"), { message: "the live page to get the next push" });
    second.destroy();
    events.close();
  });
});
