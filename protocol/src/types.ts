/**
 * JSON-RPC 2.0 and MCP message shapes. Pure types: no runtime, no Node I/O.
 */

/** A JSON-RPC id. MCP forbids `null` ids on requests; responses to unparseable input carry `null`. */
export type RequestId = string | number;

export type JsonObject = { [key: string]: unknown };

export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: RequestId;
  method: string;
  params?: JsonObject;
}

export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: JsonObject;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcSuccess {
  jsonrpc: "2.0";
  id: RequestId;
  result: JsonObject;
}

export interface JsonRpcErrorResponse {
  jsonrpc: "2.0";
  /** `null` only when the request's id could not be read (parse error, invalid request). */
  id: RequestId | null;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcSuccess | JsonRpcErrorResponse;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** What {@link classify} found a parsed value to be. */
export type MessageKind = "request" | "notification" | "success" | "error" | "invalid";

/** MCP protocol revisions mcpd speaks, newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;
export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];
export const LATEST_PROTOCOL_VERSION: ProtocolVersion = "2025-11-25";

export interface Implementation {
  name: string;
  version: string;
  title?: string;
  [key: string]: unknown;
}

export interface ServerCapabilities {
  tools?: { listChanged?: boolean; [k: string]: unknown };
  prompts?: { listChanged?: boolean; [k: string]: unknown };
  resources?: { subscribe?: boolean; listChanged?: boolean; [k: string]: unknown };
  logging?: JsonObject;
  completions?: JsonObject;
  experimental?: JsonObject;
  [key: string]: unknown;
}

export interface ClientCapabilities {
  roots?: { listChanged?: boolean; [k: string]: unknown };
  sampling?: JsonObject;
  elicitation?: JsonObject;
  experimental?: JsonObject;
  [key: string]: unknown;
}

export interface InitializeResult {
  protocolVersion: string;
  capabilities: ServerCapabilities;
  serverInfo: Implementation;
  instructions?: string;
  [key: string]: unknown;
}

export interface Tool {
  name: string;
  description?: string;
  inputSchema: JsonObject;
  [key: string]: unknown;
}

export interface Prompt {
  name: string;
  description?: string;
  arguments?: Array<{ name: string; description?: string; required?: boolean }>;
  [key: string]: unknown;
}

export interface Resource {
  uri: string;
  name: string;
  mimeType?: string;
  [key: string]: unknown;
}

export interface ResourceTemplate {
  uriTemplate: string;
  name: string;
  [key: string]: unknown;
}

export interface CallToolResult {
  content: Array<{ type: string; [key: string]: unknown }>;
  isError?: boolean;
  structuredContent?: JsonObject;
  [key: string]: unknown;
}

/** MCP logging levels, least to most severe (RFC 5424 order). */
export const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
