/**
 * A tool's `x-mcp-header` annotations (MCP 2026-07-28, Streamable HTTP, SEP-2243): a property of the
 * tool's `inputSchema` may name a header; a client calling the tool over HTTP mirrors that argument's value
 * into `Mcp-Param-<name>`. A client must not call a tool whose annotations are invalid: a name that is empty,
 * not a string, or not an HTTP token (no spaces, colons, control or non-ASCII characters); a property that is
 * not a string, integer or boolean; or two properties naming the same header, whatever its case.
 */
import { isObject } from "./guards.js";

/** One argument mirrored into a header: the property's name and the header's (without `Mcp-Param-`). */
export interface ParamHeader {
  readonly property: string;
  readonly header: string;
}

/** RFC 9110 `token`: the characters an HTTP field name may hold. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The JSON Schema types a header may mirror. */
const MIRRORABLE = new Set(["string", "integer", "boolean"]);

/** The headers a tool's `inputSchema` asks for, or why its annotations are invalid (`invalid`). */
export function paramHeadersOf(inputSchema: unknown): { headers: ParamHeader[] } | { invalid: string } {
  const properties = isObject(inputSchema) && isObject(inputSchema.properties) ? inputSchema.properties : {};
  const headers: ParamHeader[] = [];
  const seen = new Map<string, string>();
  for (const [property, schema] of Object.entries(properties)) {
    if (!isObject(schema) || !("x-mcp-header" in schema)) continue;
    const header = schema["x-mcp-header"];
    if (typeof header !== "string" || header === "") return { invalid: `property "${property}": x-mcp-header must be a non-empty string` };
    if (!TOKEN.test(header))
      return { invalid: `property "${property}": x-mcp-header ${JSON.stringify(header)} is not a valid header name` };
    if (typeof schema.type !== "string" || !MIRRORABLE.has(schema.type))
      return { invalid: `property "${property}": x-mcp-header is allowed on string, integer and boolean properties only` };
    const other = seen.get(header.toLowerCase());
    if (other !== undefined) return { invalid: `properties "${other}" and "${property}" name the same x-mcp-header "${header}"` };
    seen.set(header.toLowerCase(), property);
    headers.push({ property, header });
  }
  return { headers };
}
