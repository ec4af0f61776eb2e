import type { IncomingMessage, ServerResponse } from "node:http";
import {
  McpdError,
  McpdLogs,
  McpdSelect,
  McpdStatus,
  silentLogger,
  type DashboardLoginResult,
  type JsonObject,
  type Logger,
} from "@mcpd/protocol";
import { isoTime } from "../../infra/iso-time.js";
import type { Router } from "../../router/router.js";
import { liveFigures } from "../../metrics/metrics-snapshot.js";
import type { MCPManager } from "../../supervision/manager.js";
import { checkHostAndOrigin } from "../http-guard.js";
import { callTool, runAction, serverDetail, type ApiAnswer } from "./dashboard-api.js";
import { DashboardAccess, cookieValue, type DashboardSession } from "./dashboard-access.js";
import { DashboardEvents } from "./dashboard-events.js";
import { isAsset, sendAsset, sendJson, sendPage, sendText } from "./dashboard-pages.js";
import { InProcessClient } from "./in-process-client.js";
import { RUNTIME_DEFAULTS } from "../../defaults.js";

export interface DashboardOptions {
  router: Router;
  /** The servers: their events (`watch`) and the counters the charts are drawn from (read on each push). */
  manager: Pick<MCPManager, "watch" | "servers">;
  logger?: Logger;
}

/** Largest body of an action or a "try a tool" call, in bytes. */
const MAX_BODY_BYTES = 256 * 1024;

/**
 * The dashboard the HTTP front end serves at `/` and under `/dashboard/` (docs/dashboard.md). Its own kind
 * of access: a one-time login link ({@link login}) sets a session cookie; no bearer token opens it, and
 * its cookie opens nothing else. Actions (POST) also need the session's CSRF token and the dashboard's own
 * exact Origin. It reads and acts through a control connection of its own, as the `mcpd` command does.
 */
export class Dashboard {
  readonly access = new DashboardAccess();
  private readonly log: Logger;
  private readonly events: DashboardEvents;
  private control: { client: InProcessClient; selected: Promise<JsonObject> } | undefined;

  constructor(private readonly opts: DashboardOptions) {
    this.log = opts.logger ?? silentLogger;
    this.events = new DashboardEvents(
      {
        status: () => this.ask(McpdStatus.method),
        logs: async () => (await this.ask(McpdLogs.method, { lines: RUNTIME_DEFAULTS.dashboardLogLines })).lines as string[],
        watch: (listener) => opts.manager.watch(listener),
        figures: () => liveFigures(opts.manager),
      },
      this.log,
    );
  }

  /** Whether the dashboard answers `url` (a request's path and query): `/`, and what is under `/dashboard/`. */
  owns(url: string | undefined): boolean {
    const path = (url ?? "/").split("?")[0] as string;
    return path === "/" || path === "/dashboard" || path.startsWith("/dashboard/");
  }

  /**
   * A one-time login link on the front end at `frontUrl` (its `/mcp` URL, from status).
   * @throws McpdError MCPD_DASHBOARD_UNAVAILABLE when the front end does not listen.
   */
  login(frontUrl: string | null): DashboardLoginResult {
    if (frontUrl === null) {
      throw new McpdError(
        "MCPD_DASHBOARD_UNAVAILABLE",
        'the HTTP front end, which serves the dashboard, is not listening (see "mcpd.http" and mcpd status)',
      );
    }
    const { ticket, expiresAt } = this.access.issueTicket();
    const url = new URL("/dashboard/login", frontUrl);
    url.searchParams.set("ticket", ticket);
    return { url: url.href, expiresAt: isoTime(expiresAt) };
  }

  /** Ends the live streams and the control connection (shutdown). */
  async close(): Promise<void> {
    this.events.close();
    const c = this.control;
    this.control = undefined;
    await c?.client.close();
  }

  /** Answers a request {@link owns} accepts, behind the same Host and Origin checks as `/mcp`. */
  serve(req: IncomingMessage, res: ServerResponse, allowed: ReadonlySet<string>): void {
    const why = checkHostAndOrigin(req.headers.host, req.headers.origin, allowed);
    if (why) return sendText(res, 403, `Forbidden: ${why} (DNS rebinding protection; see "mcpd.http.allowedHosts")`);
    // Only its own exact origin: a page on another loopback port passes the Host check above (and gets
    // the cookie sent, cookies ignoring ports), but not this.
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${req.headers.host}`) {
      return sendText(res, 403, "Forbidden: the dashboard answers its own origin only", { "x-mcpd-code": "MCPD_DASHBOARD_FORBIDDEN" });
    }
    const url = new URL(req.url ?? "/", "http://localhost");
    const method = req.method ?? "GET";
    if (isAsset(url.pathname)) return method === "GET" ? sendAsset(res, url.pathname) : sendText(res, 405, "Method Not Allowed");
    const cookieName = `mcpd_dashboard_${/:(\d{1,5})$/.exec(req.headers.host ?? "")?.[1] ?? "80"}`;
    if (url.pathname === "/dashboard/login" && method === "GET") return this.redeem(res, url, cookieName);
    const session = this.access.session(cookieValue(req.headers.cookie, cookieName));
    if (session === undefined) {
      return sendText(res, 401, "Unauthorized: open the dashboard with `mcpd dashboard` (a one-time login link)", {
        "x-mcpd-code": "MCPD_DASHBOARD_UNAUTHORIZED",
      });
    }
    if (method === "GET") return this.read(res, url, session);
    if (method !== "POST") return sendText(res, 405, "Method Not Allowed");
    const refused = refusal(req, session);
    if (refused) return sendText(res, 403, `Forbidden: ${refused}`, { "x-mcpd-code": "MCPD_DASHBOARD_FORBIDDEN" });
    this.act(req, res, url.pathname).catch((err: Error) => this.failed(res, err));
  }

  private redeem(res: ServerResponse, url: URL, cookieName: string): void {
    const cookie = this.access.redeem(url.searchParams.get("ticket") ?? "");
    if (cookie === undefined) {
      return sendText(res, 401, "This login link was used already, has expired or is not one: run `mcpd dashboard` for a new one", {
        "x-mcpd-code": "MCPD_DASHBOARD_UNAUTHORIZED",
      });
    }
    res.writeHead(303, {
      location: "/",
      "set-cookie": `${cookieName}=${cookie}; HttpOnly; SameSite=Strict; Path=/`,
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    });
    res.end();
  }

  private read(res: ServerResponse, url: URL, session: DashboardSession): void {
    if (url.pathname === "/") return sendPage(res, session.csrf);
    if (url.pathname === "/dashboard/events") return this.events.open(res, () => this.access.live(session));
    if (url.pathname === "/dashboard/api/server") {
      const name = url.searchParams.get("name") ?? "";
      const profiles = this.opts.router.profiles.names();
      serverDetail((m, p) => this.ask(m, p), name, profiles).then(
        (detail) => sendJson(res, 200, detail),
        (err: Error) => this.failed(res, err),
      );
      return;
    }
    sendText(res, 404, "Not found");
  }

  private async act(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const body = await readJson(req);
    if (body === undefined) return sendJson(res, 400, { ok: false, error: "the body must be a JSON object" });
    let out: ApiAnswer;
    if (path === "/dashboard/api/action") out = await runAction((m, p) => this.ask(m, p), body);
    else if (path === "/dashboard/api/call") out = await callTool(this.opts.router, body);
    else return sendText(res, 404, "Not found");
    this.log.info({ path, action: body.action ?? body.tool, server: body.server, ok: out.ok }, "dashboard action");
    sendJson(res, 200, out);
  }

  /** A request that failed past its checks (a bug, or the daemon shutting down): logged, answered 500. */
  private failed(res: ServerResponse, err: Error): void {
    this.log.error({ err: err.message }, "dashboard request failed");
    if (!res.headersSent) sendJson(res, 500, { ok: false, error: err.message });
    else if (!res.writableEnded) res.end();
  }

  /** Asks the dashboard's own control connection (opened at first use). */
  private async ask(method: string, params?: JsonObject): Promise<JsonObject> {
    if (this.control === undefined) {
      const client = new InProcessClient(this.opts.router);
      this.control = { client, selected: client.request(McpdSelect.method, { control: true }) };
    }
    await this.control.selected;
    return this.control.client.request(method, params);
  }
}

/** Why an action is refused: not from the dashboard's own exact origin, not JSON, or without the CSRF token. */
function refusal(req: IncomingMessage, session: DashboardSession): string | undefined {
  // A foreign Origin was refused already (serve); an action must also carry one.
  if (req.headers.origin === undefined) return "an action must come from the dashboard's own origin";
  if (!/^application\/json\b/i.test(req.headers["content-type"] ?? "")) return "an action's body must be application/json";
  const csrf = req.headers["x-mcpd-csrf"];
  if (!DashboardAccess.csrfMatches(session, typeof csrf === "string" ? csrf : undefined)) return "missing or wrong CSRF token";
  return undefined;
}

/** A request's JSON object body, at most {@link MAX_BODY_BYTES}; undefined when it is not one. */
function readJson(req: IncomingMessage): Promise<JsonObject | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.destroy();
      } else chunks.push(c);
    });
    req.on("error", () => resolve(undefined));
    req.on("end", () => {
      try {
        const v: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        resolve(typeof v === "object" && v !== null && !Array.isArray(v) ? (v as JsonObject) : undefined);
      } catch {
        resolve(undefined);
      }
    });
  });
}
