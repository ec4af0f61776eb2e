import { McpdDashboardLogin, McpdError, WireCode, type ControlHandler, type DashboardLoginResult, type NoParams } from "@mcpd/protocol";

/** What the handler needs from the daemon: the dashboard's login links, when it has an HTTP front end. */
interface DashboardContext {
  d: { dashboardLogin?: () => DashboardLoginResult };
}

/** The handler of `mcpd/dashboardLogin` (privileged: only a control connection, such as `mcpd dashboard`, gets a link). */
export const DASHBOARD_HANDLERS: {
  readonly [McpdDashboardLogin.method]: ControlHandler<typeof McpdDashboardLogin, DashboardContext>;
} = {
  [McpdDashboardLogin.method]: {
    params: (): NoParams => ({}),
    handle: async (_params, ctx) => {
      if (ctx.d.dashboardLogin) return ctx.d.dashboardLogin();
      throw new McpdError("MCPD_METHOD_NOT_FOUND", "this daemon has no HTTP front end, so no dashboard", {
        wireCode: WireCode.MethodNotFound,
      });
    },
  },
};
