import type { ClientCapabilities } from "@mcpd/protocol";

/** Whether a connection's client declared that capability (`sampling`, `elicitation`, `roots`) in initialize. */
export function declares(client: { readonly clientCapabilities: ClientCapabilities }, capability: string): boolean {
  const declared = (client.clientCapabilities as Record<string, unknown>)[capability];
  return typeof declared === "object" && declared !== null && !Array.isArray(declared);
}
