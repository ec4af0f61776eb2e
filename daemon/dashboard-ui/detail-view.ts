import { type Answer, getJson, post } from "./api.js";
import { h, replace } from "./dom.js";
import type { Tool } from "./types.js";

type Detail = Record<"tools" | "prompts" | "resources" | "stderr", Answer>;

const list = (a: Answer, key: string): Record<string, unknown>[] => (a.ok ? ((a.result[key] as Record<string, unknown>[]) ?? []) : []);

/** One server's tools (with "try a tool"), prompts, resources and stderr tail. */
export class DetailView {
  readonly el = h("section", { "aria-labelledby": "detail-h", class: "detail", hidden: true });

  async show(server: string): Promise<void> {
    this.el.hidden = false;
    replace(this.el, h("h2", { id: "detail-h", tabindex: "-1" }, `Server ${server}`), h("p", {}, "Loading…"));
    const d = await getJson<Detail>(`/dashboard/api/server?name=${encodeURIComponent(server)}`);
    const tools = list(d.tools, "tools") as unknown as Tool[];
    const heading = h("h2", { id: "detail-h", tabindex: "-1" }, `Server ${server}`);
    replace(
      this.el,
      heading,
      h("h3", {}, `Tools (${tools.length})`),
      d.tools.ok ? null : h("p", { class: "error" }, d.tools.error),
      h("ul", { class: "tools" }, ...tools.map((t) => toolItem(server, t))),
      h("h3", {}, "Prompts"),
      h(
        "ul",
        {},
        ...list(d.prompts, "prompts").map((p) => h("li", {}, String(p.name), p.description ? ` — ${String(p.description)}` : "")),
      ),
      h("h3", {}, "Resources"),
      h("ul", {}, ...list(d.resources, "resources").map((r) => h("li", {}, String(r.uri), r.name ? ` (${String(r.name)})` : ""))),
      h("h3", {}, "Stderr (tail)"),
      h("pre", { class: "stderr" }, d.stderr.ok ? ((d.stderr.result.lines as string[]) ?? []).join("\n") : d.stderr.error),
    );
    heading.focus();
  }
}

function toolItem(server: string, t: Tool): HTMLLIElement {
  const out = h("pre", { class: "tool-result", "aria-live": "polite" });
  const form = tryForm(server, t, out);
  return h(
    "li",
    { "data-tool": t.name },
    h("strong", {}, t.name),
    t.profiles && t.profiles.length > 0 ? h("span", { class: "profiles" }, ` profiles: ${t.profiles.join(", ")}`) : null,
    h("p", { class: "description" }, t.description ?? ""),
    h("details", {}, h("summary", {}, "Try it"), form, out),
  );
}

/** A form made from the tool's input schema: text, number and checkbox fields, JSON for anything else. */
function tryForm(server: string, t: Tool, out: HTMLElement): HTMLFormElement {
  const props = t.inputSchema?.properties ?? {};
  const required = new Set(t.inputSchema?.required ?? []);
  const fields = Object.entries(props).map(([name, p]) => {
    const id = `f-${server}-${t.name}-${name}`.replace(/[^A-Za-z0-9_-]/g, "_");
    const type = p.type ?? "json";
    const input =
      type === "boolean"
        ? h("input", { id, name, type: "checkbox" })
        : type === "number" || type === "integer"
          ? h("input", { id, name, type: "number", step: type === "integer" ? "1" : "any", required: required.has(name) })
          : type === "string"
            ? h("input", { id, name, type: "text", required: required.has(name) })
            : h("textarea", { id, name, rows: "2", placeholder: "JSON" });
    input.dataset.kind = type;
    return h(
      "div",
      { class: "field" },
      h("label", { for: id }, `${name}${required.has(name) ? " *" : ""}`),
      input,
      p.description ? h("small", {}, p.description) : null,
    );
  });
  const form = h("form", { class: "try" }, ...fields, h("button", { type: "submit" }, "Call"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    void call(server, t.name, form, out);
  });
  return form;
}

async function call(server: string, tool: string, form: HTMLFormElement, out: HTMLElement): Promise<void> {
  const args: Record<string, unknown> = {};
  try {
    for (const el of Array.from(form.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>("input, textarea"))) {
      const kind = el.dataset.kind;
      if (kind === "boolean") args[el.name] = (el as HTMLInputElement).checked;
      else if (el.value === "") continue;
      else if (kind === "number" || kind === "integer") args[el.name] = Number(el.value);
      else if (kind === "string") args[el.name] = el.value;
      else args[el.name] = JSON.parse(el.value);
    }
  } catch (err) {
    replace(out, `bad JSON: ${(err as Error).message}`);
    return;
  }
  replace(out, "calling…");
  const r = await post("/dashboard/api/call", { server, tool, arguments: args });
  out.classList.toggle("error", !r.ok);
  replace(out, r.ok ? resultText(r.result) : r.error);
}

/** A tool result as text: its text contents, then the rest as JSON. */
function resultText(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? (result.content as { type?: string; text?: string }[]) : [];
  const texts = content.filter((c) => c.type === "text").map((c) => c.text ?? "");
  return [...texts, JSON.stringify(result, null, 2)].join("\n");
}
