/**
 * The adapter between supervision and the router's ports (router/upstream-port.ts): the manager as the
 * router's {@link ServerDirectory}. A {@link ServerHandle} is an {@link Upstream} as it is (checked here by
 * the compiler), so a relayed call goes from the router to the handle with nothing in between; what the
 * manager tells its listeners goes to the router's {@link UpstreamEvents}, typed, with the handle.
 */
import type { ClientCapabilities } from "@mcpd/protocol";
import type { ServerDirectory, Upstream, UpstreamEvents } from "../router/upstream-port.js";
import type { MCPManager } from "../supervision/manager.js";
import type { ServerHandle } from "../supervision/server-handle.js";

/** A handle as the router's port: the compiler holds ServerHandle to the Upstream interface. */
const asUpstream = (handle: ServerHandle): Upstream => handle;

/** The manager's servers, as the router finds them. */
export class ManagerDirectory implements ServerDirectory {
  constructor(private readonly manager: MCPManager) {}

  get servers(): readonly Upstream[] {
    return this.manager.servers;
  }

  get(name: string): Upstream | undefined {
    return this.manager.get(name);
  }

  require(name: string): Upstream {
    return asUpstream(this.manager.require(name));
  }

  handleFor(name: string, connectionId: string, capabilities?: ClientCapabilities): Promise<Upstream> {
    return this.manager.handleFor(name, connectionId, capabilities);
  }

  standIn(name: string): Upstream | undefined {
    return this.manager.ui.standIn(name);
  }

  unpark(name: string): void {
    this.manager.ui.unpark(name);
  }

  releaseConnection(connectionId: string, keep?: ReadonlySet<Upstream>): Promise<void> {
    return this.manager.releaseConnection(connectionId, keep);
  }

  movePrivate(handle: Upstream, connectionId: string): void {
    this.manager.movePrivate(handle, connectionId);
  }

  stopPrivate(handle: Upstream, reason: string): Promise<void> {
    return this.manager.stopPrivate(handle, reason);
  }

  /**
   * The router's callbacks hear every handle's events from now on, and answer every server's requests
   * to clients (one router per manager: the last one installed answers them).
   */
  listen(events: UpstreamEvents): void {
    this.manager.watch({
      added: (h) => events.added(h),
      removed: (h) => events.removed(h),
      state: (h, change) => events.state(h, change),
      listChanged: (h, kind) => events.listChanged(h, kind),
      notification: (h, method, params, context) => events.notification(h, method, params, context),
    });
    this.manager.serverRequests = (h, request, context) => events.request(h, request, context);
    this.manager.ui.used = (server) => events.usedByUiClient(server);
    this.manager.ui.usedWithout = (server) => events.usedWithoutUi(server);
  }
}
