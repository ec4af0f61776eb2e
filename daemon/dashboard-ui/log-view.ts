import { h, replace } from "./dom.js";

/** pino's levels by number, and the ones the filter offers. */
const LEVELS: Record<number, string> = { 10: "trace", 20: "debug", 30: "info", 40: "warn", 50: "error", 60: "fatal" };
const RANK: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

interface Line {
  level: string;
  server: string;
  text: string;
}

/** A log line as shown: its level, its server (if any) and the line; a line that is not JSON as it is. */
function parse(raw: string): Line {
  try {
    const o = JSON.parse(raw) as Record<string, unknown>;
    const level = typeof o.level === "number" ? (LEVELS[o.level] ?? String(o.level)) : String(o.level ?? "info");
    const server = typeof o.server === "string" ? o.server : "";
    const { level: _l, time, msg, pid: _p, hostname: _h, ...rest } = o;
    const when = typeof time === "number" ? new Date(time).toISOString().slice(11, 23) : String(time ?? "");
    const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : "";
    return { level, server, text: `${when} ${level.toUpperCase()} ${String(msg ?? "")}${extra}` };
  } catch {
    return { level: "info", server: "", text: raw };
  }
}

/** The daemon's log, live, filtered by lowest level and by server. */
export class LogView {
  readonly el: HTMLElement;
  private lines: Line[] = [];
  private readonly out = h("pre", { class: "log", tabindex: "0", "aria-label": "daemon log" });
  private readonly level = h(
    "select",
    { id: "log-level" },
    ...["trace", "debug", "info", "warn", "error"].map((l) => h("option", { value: l, selected: l === "trace" }, l)),
  );
  private readonly server = h("input", { id: "log-server", type: "text", placeholder: "any server" });

  constructor() {
    const again = (): void => this.render();
    this.level.addEventListener("change", again);
    this.server.addEventListener("input", again);
    this.el = h(
      "section",
      { "aria-labelledby": "log-h" },
      h("h2", { id: "log-h" }, "Daemon log"),
      h(
        "div",
        { class: "filters" },
        h("label", { for: "log-level" }, "Level at least "),
        this.level,
        h("label", { for: "log-server" }, " Server "),
        this.server,
      ),
      this.out,
    );
  }

  update(raw: string[]): void {
    this.lines = raw.map(parse);
    this.render();
  }

  private render(): void {
    const min = RANK[this.level.value] ?? 0;
    const server = this.server.value.trim();
    const shown = this.lines.filter((l) => (RANK[l.level] ?? 30) >= min && (server === "" || l.server === server));
    replace(this.out, shown.map((l) => l.text).join("\n"));
  }
}
