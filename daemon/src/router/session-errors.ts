import { WireCode, isObject, type JsonRpcErrorObject, type RequestId } from "@mcpd/protocol";
import type { Scrubber } from "./ports.js";

/** The id of a message, when it has a usable one (to answer it with an error). */
export function messageId(message: unknown): RequestId | null {
  return isObject(message) && (typeof message.id === "string" || typeof message.id === "number") ? message.id : null;
}

/** `error` with a configured secret a server or library put in its message or data masked. */
export function scrubbedError(secrets: Scrubber, error: JsonRpcErrorObject): JsonRpcErrorObject {
  const { message, data, ...rest } = error;
  const clean: JsonRpcErrorObject = { ...rest, message: typeof message === "string" ? secrets.scrub(message) : message };
  const cleanData = data === undefined ? undefined : secrets.scrubValue(data);
  if (cleanData !== undefined) clean.data = cleanData;
  return clean;
}

/** The answer to a message whose handling threw (a bug, or a value too deeply nested to print). */
export function handlingError(err: unknown): JsonRpcErrorObject {
  return { code: WireCode.InternalError, message: `Internal error handling the message: ${(err as Error)?.message ?? "unknown"}` };
}
