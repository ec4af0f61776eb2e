/**
 * The headers a 2026-era request mirrors from its body on Streamable HTTP beyond `Mcp-Method` (MCP
 * 2026-07-28, "Streamable HTTP", "Request Metadata"): how a value is written in a header (as is, or
 * `=?base64?…?=`), and the `Mcp-Param-{Name}` headers a tool's `inputSchema` asks for with `x-mcp-header`
 * annotations, with the rules that make an annotation, and so the tool, invalid.
 */
import { isObject } from "./guards.js";
import type { JsonObject } from "./types.js";

/** Characters a header value may carry as is: visible ASCII and inner spaces. */
const PLAIN_HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** An HTTP field-name token (RFC 9110 section 5.1, `1*tchar`). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The encoded form: `=?base64?<base64>?=`. */
const ENCODED = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A value as a header carries it: as is when it is plain header-safe ASCII, else (non-ASCII, control
 * characters, leading or trailing blanks, empty, or a value that looks like the encoded form)
 * `=?base64?<UTF-8 in base64>?=`.
 */
export function encodeHeaderValue(value: string): string {
  if (PLAIN_HEADER_VALUE.test(value) && !(value.startsWith("=?base64?") && value.endsWith("?="))) return value;
  let binary = "";
  for (const byte of utf8.encode(value)) binary += String.fromCharCode(byte);
  return `=?base64?${btoa(binary)}?=`;
}

/** A header's value as the 2026 era encodes it: as is, or `=?base64?<UTF-8 in base64>?=`; undefined when it cannot be decoded. */
export function decodeHeaderValue(value: string): string | undefined {
  const m = ENCODED.exec(value);
  if (!m) return /^[\x20-\x7e]*$/.test(value) ? value : undefined;
  try {
    return fromUtf8.decode(Uint8Array.from(atob(m[1] as string), (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
}

/** One annotated parameter: the header's name part (`Mcp-Param-{name}`) and the chain of `properties` keys to the value. */
export interface HeaderParam {
  readonly name: string;
  readonly path: readonly string[];
}

/** A tool's `x-mcp-header` annotations, read: the parameters to mirror, or why the tool definition is invalid. */
export type HeaderParams = { readonly params: readonly HeaderParam[] } | { readonly invalid: string };

/** Keywords whose values are instances, not schemas: an `x-mcp-header` key inside them is data. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples", "example"]);
const PRIMITIVE_TYPES = new Set(["string", "integer", "boolean"]);

/** Whether a schema's `type` is one primitive `x-mcp-header` allows (optionally with `null`). */
function primitiveType(type: unknown): boolean {
  if (typeof type === "string") return PRIMITIVE_TYPES.has(type);
  if (!Array.isArray(type)) return false;
  const others = type.filter((t) => t !== "null");
  return others.length === 1 && PRIMITIVE_TYPES.has(others[0] as string);
}

/**
 * Reads a tool's `x-mcp-header` annotations (MCP 2026-07-28, "Custom Headers from Tool Parameters"). An
 * annotation must be a non-empty HTTP token, unique (case-insensitively) in the schema, on a property of
 * type string, integer or boolean, reached from the root through `properties` keys only (not through
 * `items`, composition, conditional keywords or `$ref`). One that breaks a rule makes the tool invalid.
 */
export function headerParams(inputSchema: unknown): HeaderParams {
  const params: HeaderParam[] = [];
  const seen = new Set<string>();
  let invalid: string | undefined;
  const visit = (node: unknown, path: string[] | undefined, depth: number): void => {
    if (invalid !== undefined || depth > 64) return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, undefined, depth + 1);
      return;
    }
    if (!isObject(node)) return;
    if (Object.hasOwn(node, "x-mcp-header")) {
      invalid = annotationProblem(node, path, seen);
      if (invalid !== undefined) return;
      params.push({ name: node["x-mcp-header"] as string, path: path as string[] });
    }
    for (const [key, value] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(key) || key === "x-mcp-header") continue;
      if (key === "properties" && isObject(value)) {
        for (const [prop, schema] of Object.entries(value)) visit(schema, path === undefined ? undefined : [...path, prop], depth + 1);
      } else visit(value, undefined, depth + 1);
    }
  };
  visit(inputSchema, [], 0);
  return invalid === undefined ? { params } : { invalid };
}

/** What is wrong with the annotation of `node` (reached by `path`, undefined: not statically reachable); undefined: nothing. */
function annotationProblem(node: JsonObject, path: string[] | undefined, seen: Set<string>): string | undefined {
  const name = node["x-mcp-header"];
  const where =
    path === undefined || path.length === 0
      ? "a schema not reachable as a property through `properties` alone"
      : `property "${path.join(".")}"`;
  if (typeof name !== "string" || name === "") return `x-mcp-header on ${where} is not a non-empty string`;
  if (!TOKEN.test(name)) return `x-mcp-header ${JSON.stringify(name)} on ${where} is not an HTTP header token`;
  if (path === undefined || path.length === 0) return `x-mcp-header ${JSON.stringify(name)} is on ${where}`;
  if (seen.has(name.toLowerCase())) return `x-mcp-header ${JSON.stringify(name)} is used twice (case-insensitively)`;
  seen.add(name.toLowerCase());
  if (!primitiveType(node.type)) return `x-mcp-header ${JSON.stringify(name)} is on ${where}, whose type is not string, integer or boolean`;
  return undefined;
}

/**
 * The `Mcp-Param-{Name}` headers of a call with `args`: each annotated parameter's value (a string as is,
 * an integer in decimal, a boolean as `true`/`false`), encoded as {@link encodeHeaderValue} says; a
 * parameter absent or null (or of another type) gets no header.
 */
export function paramHeaderValues(params: readonly HeaderParam[], args: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { name, path } of params) {
    let value: unknown = args;
    for (const key of path) value = isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
    let text: string | undefined;
    if (typeof value === "string") text = value;
    else if (typeof value === "boolean") text = String(value);
    else if (typeof value === "number" && Number.isSafeInteger(value)) text = String(value);
    if (text !== undefined) headers[`Mcp-Param-${name}`] = encodeHeaderValue(text);
  }
  return headers;
}
