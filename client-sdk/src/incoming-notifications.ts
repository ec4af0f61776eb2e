import type { EventEmitter } from "node:events";
import { McpdServerStateNotification, type JsonObject, type Logger } from "@mcpd/protocol/core";
import type { IncomingRequests } from "./incoming-requests.js";
import { serverOf } from "./server-routing.js";
import type { SubscriptionRegistry } from "./subscription-registry.js";
import type { McpdClientEvents, ServerState } from "./types.js";

/** The parts of a client that notifications are handed to. */
export interface NotificationTargets {
  subscriptions: SubscriptionRegistry;
  incoming: IncomingRequests;
  /** The server of a transparent view, or undefined for the aggregate view. */
  viewServer: string | undefined;
  logger: Logger;
}

/**
 * The notifications the daemon sends one client, turned into the client's events ({@link McpdClientEvents}):
 * resource updates to their subscribers, list changes as `listChanged`, `notifications/mcpd/serverState`
 * as `serverState` (a server ready again gets its stale subscriptions restored), a server's cancellation
 * to the request handler it aborts; every one is also emitted as `notification`.
 */
export class IncomingNotifications {
  private readonly events: EventEmitter<McpdClientEvents>;
  private readonly targets: NotificationTargets;

  constructor(events: EventEmitter<McpdClientEvents>, targets: NotificationTargets) {
    this.events = events;
    this.targets = targets;
  }

  /** Handles one notification from the daemon. */
  handle(method: string, params: JsonObject | undefined): void {
    const { subscriptions, viewServer } = this.targets;
    const server = serverOf(params, viewServer);
    switch (method) {
      case "notifications/resources/updated":
        if (params) subscriptions.deliver(params, server);
        break;
      case "notifications/tools/list_changed":
        this.events.emit("listChanged", { kind: "tools", server });
        break;
      case "notifications/prompts/list_changed":
        this.events.emit("listChanged", { kind: "prompts", server });
        break;
      case "notifications/resources/list_changed":
        this.events.emit("listChanged", { kind: "resources", server });
        break;
      case "notifications/cancelled":
        this.targets.incoming.cancel(params?.requestId, params?.reason);
        break;
      case McpdServerStateNotification.method:
        if (params && typeof params.server === "string") {
          if (params.state === "ready" && subscriptions.size > 0) this.retrySubscriptions(params.server);
          this.events.emit("serverState", {
            server: params.server,
            state: params.state as ServerState,
            previous: params.previous as ServerState | undefined,
            reason: typeof params.reason === "string" ? params.reason : undefined,
          });
        }
        break;
    }
    this.events.emit("notification", { method, params, server });
  }

  private retrySubscriptions(server: string): void {
    void this.targets.subscriptions.retryStale(server).then((failures) => {
      for (const f of failures)
        this.targets.logger.warn({ uri: f.uri, server: f.server, err: f.error.message }, "could not restore a resource subscription");
    });
  }
}
