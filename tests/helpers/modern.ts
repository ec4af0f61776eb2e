/**
 * The 2026-07-28 era in tests: the envelope a raw 2026-era request carries in `_meta`, and the official v2
 * SDK client (`@modelcontextprotocol/client`) pinned to 2026-07-28 or negotiating (`auto`).
 */
import { Client } from "@modelcontextprotocol/client";

/** `_meta` of a raw 2026-era request: the protocol version, the client's capabilities and its info. */
export function modernEnvelope(capabilities: Record<string, unknown> = {}, clientName = "raw-modern"): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    "io.modelcontextprotocol/clientInfo": { name: clientName, version: "1" },
  };
}

/** A v2 SDK client named `name`, pinned to 2026-07-28 (`pin`) or negotiating the version (`auto`); not connected. */
export function v2Client(name: string, mode: "pin" | "auto"): Client {
  return new Client({ name, version: "1.0.0" }, { versionNegotiation: { mode: mode === "pin" ? { pin: "2026-07-28" } : "auto" } });
}

/** The text of a tool result's first content block ("" when it has none). */
export function firstText(result: unknown): string {
  const content = (result as { content?: Array<{ text?: string }> }).content;
  return content?.[0]?.text ?? "";
}
