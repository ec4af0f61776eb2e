import { isObject, type ClientCapabilities } from "@mcpd/protocol";

/** Whether a connection's client declared that capability (`sampling`, `elicitation`, `roots`) in initialize. */
export function declares(client: { readonly clientCapabilities: ClientCapabilities }, capability: string): boolean {
  return isObject((client.clientCapabilities as Record<string, unknown>)[capability]);
}
