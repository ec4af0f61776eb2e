/** The aggregate view's request params: a field of the wrong type refused, a name replaced by its server's own. */
import { WireCode, type JsonObject, type JsonRpcErrorObject } from "@mcpd/protocol";

/** A field that must be a string was not; never echoes the value (it may be huge or nested too deep to print). */
export function notString(method: string, field: string): JsonRpcErrorObject {
  return { code: WireCode.InvalidParams, message: `${method}: "${field}" must be a string`, data: { mcpdCode: "MCPD_PROTOCOL_VIOLATION" } };
}

/** A request's params with the name it asks for replaced (in its completion `ref`, when given). */
export function renamed(params: JsonObject | undefined, name: string, ref: JsonObject | undefined): JsonObject {
  return ref === undefined ? { ...params, name } : { ...params, ref: { ...ref, name } };
}
