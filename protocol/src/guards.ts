import type {
  JsonObject,
  JsonRpcErrorResponse,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  JsonRpcSuccess,
  MessageKind,
  RequestId,
} from "./types.js";

/** Type guards over any parsed JSON value. None of them throws, whatever the input. */

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A valid JSON-RPC id: a string or a safe integer (MCP forbids null; we refuse fractions). */
export function isRequestId(value: unknown): value is RequestId {
  return typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value));
}

function paramsOk(value: JsonObject): boolean {
  // MCP params are always objects; JSON-RPC allows arrays but no MCP method uses them.
  return value.params === undefined || isObject(value.params) || Array.isArray(value.params);
}

/**
 * Classifies a parsed value. Exactly one kind is returned; anything not a well-formed JSON-RPC 2.0
 * message is `invalid`.
 */
export function classify(value: unknown): MessageKind {
  if (!isObject(value) || value.jsonrpc !== "2.0") return "invalid";
  const hasId = "id" in value;
  if (typeof value.method === "string") {
    if (!paramsOk(value)) return "invalid";
    if (!hasId) return "notification";
    return isRequestId(value.id) ? "request" : "invalid";
  }
  if ("method" in value) return "invalid";
  const hasResult = "result" in value;
  const hasError = "error" in value;
  if (hasResult === hasError) return "invalid";
  if (hasResult) return isRequestId(value.id) ? "success" : "invalid";
  const err = value.error;
  if (!isObject(err) || typeof err.code !== "number" || !Number.isInteger(err.code) || typeof err.message !== "string") {
    return "invalid";
  }
  return isRequestId(value.id) || value.id === null ? "error" : "invalid";
}

export function isJsonRpcMessage(value: unknown): value is JsonRpcMessage {
  return classify(value) !== "invalid";
}
export function isRequest(value: unknown): value is JsonRpcRequest {
  return classify(value) === "request";
}
export function isNotification(value: unknown): value is JsonRpcNotification {
  return classify(value) === "notification";
}
export function isSuccessResponse(value: unknown): value is JsonRpcSuccess {
  return classify(value) === "success";
}
export function isErrorResponse(value: unknown): value is JsonRpcErrorResponse {
  return classify(value) === "error";
}
export function isResponse(value: unknown): value is JsonRpcResponse {
  const kind = classify(value);
  return kind === "success" || kind === "error";
}
