import { McpRemoteError, ProtocolError, type Era, type Logger, type ProtocolEraSetting } from "@mcpd/protocol";
import { ProbeClosedError, type EraChoice } from "./era-handshake.js";

/**
 * The era one server is spoken to in (docs/protocol.md, "Eras upstream"): the one its `protocolEra`
 * forces, else the one learned (by a probe of an earlier start, of this daemon or, through the tool cache,
 * of an earlier one), else none (the next start probes). A learned era whose handshake a start then fails
 * (an answer it did not foresee) is forgotten.
 */
export class EraMemory {
  constructor(
    /** The learned era, if any. */
    public known: Era | undefined,
    /** Told each era learned (to keep it on disk). */
    private readonly onLearned: (era: Era) => void,
    private readonly log: Logger,
  ) {}

  /** Where the next start over a `transport` (its config's `type`) goes. */
  choice(setting: ProtocolEraSetting, transport: string | undefined): EraChoice {
    if (setting !== "auto") return { era: setting, forced: true };
    // Legacy HTTP+SSE is a 2024-11-05 transport: no 2026 server speaks it, and its silence would prove nothing.
    if (transport === "sse") return { era: "2025", forced: false };
    if (this.known === undefined) this.log.info({}, "probing the server's era with server/discover");
    return { era: this.known, forced: false };
  }

  /** A start in `choice` became ready in `era`. */
  ready(choice: EraChoice, era: Era | undefined): void {
    if (choice.forced || era === undefined || era === this.known) return;
    this.known = era;
    this.onLearned(era);
  }

  /**
   * A start in `choice` failed with `err`. True: start again at once in the 2025 era, not counted as a
   * restart (the server closed during the probe: some 2025 servers exit on a request before `initialize`).
   */
  failed(choice: EraChoice, err: unknown): boolean {
    if (choice.forced) return false;
    if (err instanceof ProbeClosedError && choice.era === undefined) {
      this.log.info(
        { err: err.message },
        "the server closed during the server/discover probe: started again in the 2025 era (not counted as a restart)",
      );
      this.known = "2025";
      this.onLearned("2025");
      return true;
    }
    // The server answered the handshake in a way its remembered era did not foresee (it may have changed):
    // the next start probes again. A crash or a timeout says nothing of its era.
    if (err instanceof McpRemoteError || err instanceof ProtocolError) this.known = undefined;
    return false;
  }
}
