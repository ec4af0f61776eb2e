/**
 * The tool-search bench's data: the recorded catalog (tests/fixtures/tool-catalog) as the aggregate
 * catalog's entries, the task sets, and generated tools that pad the catalog to a given size.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../lib/env.mjs";

const CATALOG = join(ROOT, "tests/fixtures/tool-catalog");
const TASKS = join(ROOT, "tests/fixtures/tool-search-tasks");

/** Every recorded tool as `{ server, exposed, item }`, the aggregate catalog's entry shape. */
export function realCatalog() {
  const entries = [];
  for (const file of readdirSync(CATALOG)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    const record = JSON.parse(readFileSync(join(CATALOG, file), "utf8"));
    for (const item of record.tools) entries.push({ server: record.id, exposed: `${record.id}__${item.name}`, item });
  }
  return entries;
}

/** A task set: `quality` or `tuning`. */
export function tasks(set) {
  return JSON.parse(readFileSync(join(TASKS, `${set}.json`), "utf8")).tasks;
}

const VERBS = ["get", "list", "create", "update", "delete", "sync", "export", "import", "archive", "approve", "assign", "schedule"];
const NOUNS = [
  "invoice",
  "ticket",
  "contact",
  "campaign",
  "shipment",
  "order",
  "customer",
  "lead",
  "report",
  "asset",
  "calendar event",
  "survey",
  "payout",
  "subscription",
  "coupon",
  "warehouse",
  "vendor",
  "employee",
  "expense",
  "deal",
  "playlist",
  "podcast",
];
const SYSTEMS = ["crm", "erp", "helpdesk", "billing", "hr", "marketing", "logistics", "media", "sales", "finance"];

/** A small deterministic random sequence (mulberry32), so every run pads with the same tools. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `entries` padded to `size` tools with generated ones (business systems' CRUD tools, as SaaS servers list them). */
export function padded(entries, size) {
  const next = random(37);
  const pick = (list) => list[Math.floor(next() * list.length)];
  const out = [...entries];
  for (let i = 0; out.length < size; i++) {
    const system = SYSTEMS[i % SYSTEMS.length];
    const server = `${system}-${Math.floor(i / 60)}`;
    const verb = pick(VERBS);
    const noun = pick(NOUNS);
    const name = `${verb}_${noun.replace(/ /g, "_")}_${i}`;
    const item = {
      name,
      description: `${verb[0].toUpperCase()}${verb.slice(1)} a ${noun} in the ${system} system. Returns the ${noun} record with its id, owner and status.`,
      inputSchema: {
        type: "object",
        properties: { id: { type: "string", description: `The ${noun}'s id` }, owner: { type: "string", description: "Who owns it" } },
      },
    };
    out.push({ server, exposed: `${server}__${name}`, item });
  }
  return out;
}
