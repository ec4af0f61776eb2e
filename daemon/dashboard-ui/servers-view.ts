import { post } from "./api.js";
import { duration, h, replace } from "./dom.js";
import { FigureHistory, type FiguresEvent } from "./figures.js";
import { chart, sparkline } from "./sparkline.js";
import type { ClientRow, ServerRow, Status } from "./types.js";

/** What the page shows of an action's result, and where it opens a server's details. */
export interface ServersHooks {
  result(text: string | Node, ok: boolean): void;
  open(server: string): void;
}

const CELLS = ["state", "era", "transport", "pid", "uptime", "restarts", "inflight", "calls", "errors", "latency", "last"] as const;

/**
 * The servers' table (a row per server, kept across updates so focus stays on its buttons) and the
 * connected clients, updated from each status the stream pushes.
 */
export class ServersView {
  readonly el: HTMLElement;
  private readonly body = h("tbody");
  private readonly clients = h("tbody");
  private readonly summary = h("p", { class: "summary" });
  private readonly rows = new Map<string, { tr: HTMLTableRowElement; cells: Record<string, HTMLElement>; toggle: HTMLButtonElement }>();
  private readonly history = new FigureHistory();

  constructor(private readonly hooks: ServersHooks) {
    const head = (...names: string[]) => h("thead", {}, h("tr", {}, ...names.map((n) => h("th", { scope: "col" }, n))));
    this.el = h(
      "section",
      { "aria-labelledby": "servers-h" },
      h("h2", { id: "servers-h" }, "Servers"),
      this.summary,
      h(
        "table",
        { class: "servers" },
        head(
          "Server",
          "State",
          "Era",
          "Transport",
          "PID",
          "Uptime",
          "Restarts",
          "In flight",
          "Calls (last 5 min)",
          "Errors",
          "Latency p50/p95/p99",
          "Last exit / error",
          "Actions",
        ),
        this.body,
      ),
      h("h2", { id: "clients-h" }, "Connected clients"),
      h(
        "table",
        { class: "clients", "aria-labelledby": "clients-h" },
        head("Id", "Name", "Face", "View / profile", "In flight"),
        this.clients,
      ),
    );
  }

  update(status: Status): void {
    replace(
      this.summary,
      `mcpd ${status.daemon.version}, pid ${status.daemon.pid}, up ${duration(status.daemon.uptimeMs)}; calls in flight: ${status.tables.inFlight}`,
    );
    const seen = new Set<string>();
    for (const s of status.servers) {
      seen.add(s.name);
      this.updateRow(s);
    }
    for (const [name, row] of this.rows) {
      if (!seen.has(name)) {
        row.tr.remove();
        this.rows.delete(name);
      }
    }
    replace(this.clients, ...status.clients.map((c) => clientRow(c)));
    if (status.clients.length === 0) replace(this.clients, h("tr", {}, h("td", { colspan: "5" }, "none")));
  }

  private updateRow(s: ServerRow): void {
    const row = this.rows.get(s.name) ?? this.makeRow(s.name);
    const c = row.cells;
    // Redrawn only when it changes: its Authorize button keeps the focus across updates.
    const shown = `${s.state}\n${s.stateReason ?? ""}`;
    if (row.tr.dataset.shown !== shown) {
      row.tr.dataset.shown = shown;
      replace(c.state as HTMLElement, h("span", { class: `state state-${s.state}` }, s.state));
      if (s.state === "needs-auth") (c.state as HTMLElement).append(" ", this.authorizeButton(s.name));
      if (s.stateReason && s.state !== "ready") (c.state as HTMLElement).append(h("div", { class: "reason" }, s.stateReason));
    }
    row.tr.dataset.state = s.state;
    replace(c.era as HTMLElement, s.era ?? "–");
    replace(c.transport as HTMLElement, s.mode && s.mode !== s.transport ? `${s.transport} (${s.mode})` : s.transport);
    replace(c.pid as HTMLElement, s.pid === null ? "–" : String(s.pid));
    replace(c.uptime as HTMLElement, duration(s.uptimeMs));
    replace(c.restarts as HTMLElement, String(s.restarts));
    replace(c.inflight as HTMLElement, String(s.inFlight));
    replace(c.last as HTMLElement, s.lastError ?? "");
    // By state: `enabled` is the config's flag, which `mcpd disable` (and this page's Disable) leaves as it is.
    row.toggle.textContent = s.state === "disabled" ? "Enable" : "Disable";
  }

  /** Draws every row's charts from the counters of a `figures` event. */
  figures(ev: FiguresEvent): void {
    this.history.add(ev);
    for (const [name, row] of this.rows) {
      const f = this.history.of(name);
      if (f === undefined) continue;
      const c = row.cells;
      const now = f.callsPerSecond[f.callsPerSecond.length - 1] ?? 0;
      (c.calls as HTMLElement).dataset.calls = String(f.calls);
      replace(c.calls as HTMLElement, sparkline(f.callsPerSecond, `${name}: calls per second`), ` ${f.calls} · ${now.toFixed(1)}/s`);
      (c.errors as HTMLElement).dataset.errors = String(f.errors);
      replace(c.errors as HTMLElement, sparkline(f.errorsPerSecond, `${name}: errors per second`, "errors"), ` ${f.errors}`);
      const series = (["p50", "p95", "p99"] as const).map((k) => ({ values: f[k], className: k }));
      const l = f.latency;
      replace(
        c.latency as HTMLElement,
        chart(series, `${name}: latency p50, p95 and p99 in ms`),
        h("span", { class: "figures" }, ` ${ms(l.p50)} / ${ms(l.p95)} / ${ms(l.p99)} ms`),
      );
    }
  }

  /** The Authorize button of a `needs-auth` server: runs `mcpd auth`'s flow and links its authorization page. */
  private authorizeButton(name: string): HTMLButtonElement {
    const run = async (): Promise<void> => {
      this.hooks.result(`authorizing ${name}…`, true);
      const r = await post("/dashboard/api/action", { action: "authorize", server: name });
      if (!r.ok) return this.hooks.result(`authorize ${name} failed: ${r.error}`, false);
      const url = typeof r.result.url === "string" && /^https?:\/\//i.test(r.result.url) ? r.result.url : undefined;
      if (url === undefined) return this.hooks.result(`authorize ${name}: no browser step needed; waiting for the server`, true);
      const link = h(
        "a",
        { href: url, target: "_blank", rel: "noopener noreferrer", class: "authorize-link" },
        "open the authorization page",
      );
      this.hooks.result(h("span", {}, `authorize ${name}: `, link, " (this page updates once it is done)"), true);
    };
    return h("button", { type: "button", "data-action": "authorize", click: () => void run() }, "Authorize");
  }

  private makeRow(name: string): { tr: HTMLTableRowElement; cells: Record<string, HTMLElement>; toggle: HTMLButtonElement } {
    const cells: Record<string, HTMLElement> = {};
    for (const k of CELLS) cells[k] = h("td", { "data-field": k });
    const act = (action: string) => async (): Promise<void> => {
      this.hooks.result(`${action} ${name}…`, true);
      const r = await post("/dashboard/api/action", { action, server: name });
      this.hooks.result(r.ok ? `${action} ${name}: ${JSON.stringify(r.result)}` : `${action} ${name} failed: ${r.error}`, r.ok);
    };
    const toggle = h("button", { type: "button" }, "Disable");
    toggle.addEventListener("click", () => void act(toggle.textContent === "Enable" ? "enable" : "disable")());
    const tr = h(
      "tr",
      { "data-server": name },
      h("th", { scope: "row" }, h("button", { type: "button", class: "link", click: () => this.hooks.open(name) }, name)),
      ...CELLS.map((k) => cells[k] as HTMLElement),
      h(
        "td",
        { class: "actions" },
        h("button", { type: "button", "data-action": "restart", click: () => void act("restart")() }, "Restart"),
        toggle,
      ),
    );
    this.body.append(tr);
    const row = { tr, cells, toggle };
    this.rows.set(name, row);
    return row;
  }
}

/** A latency in ms, to two significant digits (at least 0.01). */
function ms(v: number | null): string {
  return v === null ? "–" : String(Number(v.toPrecision(2)));
}

function clientRow(c: ClientRow): HTMLTableRowElement {
  const name = c.clientInfo?.name ? `${c.clientInfo.name}${c.clientInfo.version ? ` ${c.clientInfo.version}` : ""}` : "–";
  const view = c.view === "server" ? `server ${c.server ?? ""}` : c.profile ? `profile ${c.profile}` : "aggregate";
  return h("tr", {}, h("td", {}, c.id), h("td", {}, name), h("td", {}, c.face), h("td", {}, view), h("td", {}, String(c.inFlight)));
}
