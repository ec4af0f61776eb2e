import { describe, expect, it } from "vitest";
import { RUNTIME_DEFAULTS } from "../../../src/defaults.js";
import { DashboardAccess, cookieValue } from "../../../src/http/dashboard/dashboard-access.js";

describe("DashboardAccess", () => {
  it("a login ticket works once, and not after its minute", () => {
    let now = 1_000_000;
    const access = new DashboardAccess(() => now);
    const { ticket, expiresAt } = access.issueTicket();
    expect(expiresAt).toBe(now + RUNTIME_DEFAULTS.dashboardLoginTtlMs);
    const cookie = access.redeem(ticket);
    expect(cookie).toBeDefined();
    expect(access.redeem(ticket), "a second use").toBeUndefined();
    const late = access.issueTicket().ticket;
    now += RUNTIME_DEFAULTS.dashboardLoginTtlMs + 1;
    expect(access.redeem(late), "after a minute").toBeUndefined();
    expect(access.redeem("never-issued")).toBeUndefined();
  });

  it("a session opens until it expires; its CSRF token matches only itself", () => {
    let now = 0;
    const access = new DashboardAccess(() => now);
    const cookie = access.redeem(access.issueTicket().ticket) as string;
    const session = access.session(cookie);
    expect(session).toBeDefined();
    expect(DashboardAccess.csrfMatches(session as never, session?.csrf)).toBe(true);
    expect(DashboardAccess.csrfMatches(session as never, `${session?.csrf}x`)).toBe(false);
    expect(DashboardAccess.csrfMatches(session as never, undefined)).toBe(false);
    expect(access.session("another")).toBeUndefined();
    now += RUNTIME_DEFAULTS.dashboardSessionTtlMs + 1;
    expect(access.session(cookie)).toBeUndefined();
  });

  it("a session is live until it expires or newer logins let it go (what an open live stream checks)", () => {
    let now = 0;
    const access = new DashboardAccess(() => now);
    const session = access.session(access.redeem(access.issueTicket().ticket)) as NonNullable<ReturnType<typeof access.session>>;
    expect(access.live(session)).toBe(true);
    for (let i = 0; i < RUNTIME_DEFAULTS.dashboardMaxLogins; i++) access.redeem(access.issueTicket().ticket);
    expect(access.live(session), "let go for newer logins").toBe(false);
    const fresh = access.session(access.redeem(access.issueTicket().ticket)) as NonNullable<ReturnType<typeof access.session>>;
    now += RUNTIME_DEFAULTS.dashboardSessionTtlMs + 1;
    expect(access.live(fresh), "expired").toBe(false);
  });

  it("keeps at most dashboardMaxLogins unused tickets, dropping the oldest", () => {
    const access = new DashboardAccess();
    const first = access.issueTicket().ticket;
    for (let i = 0; i < RUNTIME_DEFAULTS.dashboardMaxLogins; i++) access.issueTicket();
    expect(access.redeem(first)).toBeUndefined();
  });

  it("cookieValue finds a cookie by exact name", () => {
    expect(cookieValue("a=1; mcpd_dashboard_7767=xyz; b=2", "mcpd_dashboard_7767")).toBe("xyz");
    expect(cookieValue("mcpd_dashboard_77670=xyz", "mcpd_dashboard_7767")).toBeUndefined();
    expect(cookieValue(undefined, "x")).toBeUndefined();
  });
});
