import { TRANSPORT_DEFAULTS } from "../defaults.js";

/**
 * The ids of the SSE events a stream delivered lately (`TRANSPORT_DEFAULTS.sseReplayIdsKept` of them): a
 * server that resumes from `Last-Event-ID` inclusive sends the last one again, and that replay is neither
 * delivered twice nor progress. Bounded: the oldest id is forgotten first.
 */
export class DeliveredIds {
  private readonly ids = new Set<string>();

  /** Whether `id` was delivered already; remembers it when not. */
  seen(id: string): boolean {
    if (this.ids.has(id)) return true;
    this.ids.add(id);
    if (this.ids.size > TRANSPORT_DEFAULTS.sseReplayIdsKept) this.ids.delete(this.ids.values().next().value as string);
    return false;
  }

  /** Forgets every id (the stream's session changed: its ids mean nothing to the new one). */
  clear(): void {
    this.ids.clear();
  }
}
