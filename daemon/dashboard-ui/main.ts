/**
 * The dashboard page: everything it shows comes over one server-sent event stream (`/dashboard/events`);
 * actions go through the API with the page's CSRF token. Built into dist/dashboard/app.js by `npm run build`.
 */
import { post } from "./api.js";
import { h, replace } from "./dom.js";
import { DetailView } from "./detail-view.js";
import { LogView } from "./log-view.js";
import { ServersView } from "./servers-view.js";
import type { FiguresEvent } from "./figures.js";
import type { Status } from "./types.js";

const app = document.getElementById("app") as HTMLElement;
const live = h("span", { class: "live", role: "status" }, "connecting…");
const result = h("p", { class: "result", role: "status", "aria-live": "polite" });
const showResult = (text: string | Node, ok: boolean): void => {
  result.classList.toggle("error", !ok);
  replace(result, text);
};
const detail = new DetailView();
const servers = new ServersView({ result: showResult, open: (name) => void detail.show(name) });
const log = new LogView();
const reload = h("button", { type: "button", id: "reload" }, "Reload config");
reload.addEventListener("click", async () => {
  showResult("reloading…", true);
  const r = await post("/dashboard/api/action", { action: "reload" });
  showResult(r.ok ? `reload: ${JSON.stringify(r.result)}` : `reload failed: ${r.error}`, r.ok);
});

replace(app, h("header", {}, h("h1", {}, "mcpd"), live, reload), result, servers.el, detail.el, log.el);

const events = new EventSource("/dashboard/events");
events.addEventListener("open", () => replace(live, "live"));
events.addEventListener("error", () => replace(live, "reconnecting…"));
events.addEventListener("status", (ev) => servers.update(JSON.parse((ev as MessageEvent<string>).data) as Status));
events.addEventListener("figures", (ev) => servers.figures(JSON.parse((ev as MessageEvent<string>).data) as FiguresEvent));
events.addEventListener("log", (ev) => log.update(JSON.parse((ev as MessageEvent<string>).data) as string[]));
