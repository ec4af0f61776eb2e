/**
 * Renders an MCP `tools/call` result for a terminal: text content as is (control characters shown
 * escaped), everything else summarised on one line (`[image image/png 1234 bytes]`), so binary payloads
 * never flood the screen.
 */
import { terminalText } from "./terminal-text.js";

/** One content block of a tool result (MCP `ContentBlock`). */
export interface ContentBlock {
  type: string;
  [key: string]: unknown;
}

/** Decoded size in bytes of a base64 string, without decoding it. */
export function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** One content block as text. */
export function formatContentBlock(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return str(block.text) ?? "";
    case "image":
    case "audio": {
      const data = str(block.data);
      return `[${block.type} ${str(block.mimeType) ?? "unknown"} ${data === undefined ? "?" : base64Bytes(data)} bytes]`;
    }
    case "resource": {
      const r = (typeof block.resource === "object" && block.resource !== null ? block.resource : {}) as Record<string, unknown>;
      const head = `[resource ${str(r.uri) ?? "?"}${str(r.mimeType) ? ` ${str(r.mimeType)}` : ""}`;
      if (typeof r.text === "string") return `${head}]\n${r.text}`;
      if (typeof r.blob === "string") return `${head} ${base64Bytes(r.blob)} bytes]`;
      return `${head}]`;
    }
    case "resource_link":
      return `[resource link ${str(block.uri) ?? "?"}${str(block.name) ? ` (${str(block.name)})` : ""}]`;
    default:
      return `[${block.type || "unknown"} content]`;
  }
}

/**
 * The whole result as text: each content block on its own line(s); when there is no content but
 * structured content, that as indented JSON. Safe on a terminal ({@link terminalText}): it is the server's text.
 */
export function formatToolResult(result: { content?: unknown; structuredContent?: unknown }): string {
  const blocks = Array.isArray(result.content) ? (result.content as ContentBlock[]) : [];
  if (blocks.length === 0 && result.structuredContent !== undefined) return terminalText(JSON.stringify(result.structuredContent, null, 2));
  return terminalText(
    blocks
      .filter((b): b is ContentBlock => typeof b === "object" && b !== null)
      .map(formatContentBlock)
      .join("\n"),
  );
}
