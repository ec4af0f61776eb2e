/**
 * What tool search reads of a tool: its name split into words, its title, its description and its
 * parameters' names and descriptions, as the text of one search document per tool.
 */
import { isObject, type JsonObject, type Tool } from "@mcpd/protocol";

/** The fields of a tool's search document, in the order their weights are listed (tool-index.ts). */
export const SEARCH_FIELDS = ["name", "server", "title", "description", "params"] as const;
export type SearchField = (typeof SEARCH_FIELDS)[number];

/** One tool as the index sees it: its exposed name (the document's id) and its fields' text. */
export interface ToolDocument extends Record<SearchField, string> {
  id: string;
}

/**
 * A name's words: split on `_`, `-`, `.`, `/`, spaces and case changes (`getFileInfo` -> get file info,
 * `HTTPServer` -> http server), lower-cased.
 */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[\s_\-./:]+/)
    .filter((w) => w.length > 0)
    .map((w) => w.toLowerCase());
}

/** A description's first line or sentence, at most `max` characters: what search results show. */
export function oneLine(description: string | undefined, max: number): string {
  if (description === undefined) return "";
  const text = description.trim().replace(/\s+/g, " ");
  const sentence = /^(.+?[.!?])(\s|$)/.exec(text)?.[1] ?? text;
  return sentence.length <= max ? sentence : `${sentence.slice(0, max - 1).trimEnd()}…`;
}

/** Characters of a description indexed: a long one (some are pages of instructions) adds noise and time, not meaning. */
const DESCRIPTION_CHARS = 1_000;
/** Parameters read per tool, and characters of each one's description. */
const PARAMS = 32;
const PARAM_DESCRIPTION_CHARS = 200;

/** The top-level parameters of a tool's input schema: their names (split into words) and descriptions. */
function paramsText(schema: unknown): string {
  const props = isObject(schema) && isObject(schema.properties) ? (schema.properties as JsonObject) : undefined;
  if (props === undefined) return "";
  const parts: string[] = [];
  for (const [name, value] of Object.entries(props).slice(0, PARAMS)) {
    parts.push(nameWords(name).join(" "));
    const d = isObject(value) && typeof value.description === "string" ? value.description : "";
    if (d) parts.push(d.slice(0, PARAM_DESCRIPTION_CHARS));
  }
  return parts.join(" ");
}

/** The search document of a tool listed by `server` under its exposed name `exposed`. */
export function toolDocument(exposed: string, server: string, tool: Tool): ToolDocument {
  const title = typeof tool.title === "string" ? tool.title : isObject(tool.annotations) ? String(tool.annotations.title ?? "") : "";
  return {
    id: exposed,
    name: nameWords(tool.name).join(" "),
    server: nameWords(server).join(" "),
    title,
    description: (tool.description ?? "").slice(0, DESCRIPTION_CHARS),
    params: paramsText(tool.inputSchema),
  };
}
