/**
 * The daemon's span export: follows `mcpd.telemetry.otlp` at start and on each reload, setting (or
 * clearing) the tracer the relay path reads. The OpenTelemetry SDK is loaded the first time the setting
 * is on, never before.
 */
import { canonicalJson } from "../config/config-hash.js";
import type { OtlpSettings } from "../config/config-schema.js";
import { redactUrl } from "../secrets/index.js";
import type { Logger } from "@mcpd/protocol";
import type { CallSpans } from "../router/ports.js";
import type { OtlpTracer, Scrub } from "./otlp-tracer.js";

export class Telemetry {
  private current: { key: string; tracer: OtlpTracer } | undefined;
  /** Settings are applied one at a time, in the order given. */
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  /**
   * @param spans where the relay path reads the tracer (the router's)
   * @param version mcpd's version, the spans' `service.version`
   * @param scrub masks secrets in what the spans carry (the daemon's SecretScrubber)
   */
  constructor(
    private readonly spans: CallSpans,
    private readonly version: string,
    private readonly log: Logger,
    private readonly scrub: Scrub,
  ) {}

  /** Applies `otlp` (undefined: no export). A failure to load the SDK is logged; the daemon goes on without spans. */
  apply(otlp: OtlpSettings | undefined): Promise<void> {
    this.queue = this.queue.then(() => this.applyNow(otlp));
    return this.queue;
  }

  /** Stops exporting, after sending the spans not yet sent (shutdown). */
  close(): Promise<void> {
    this.closed = true;
    return this.apply(undefined);
  }

  private async applyNow(otlp: OtlpSettings | undefined): Promise<void> {
    const key = otlp === undefined || this.closed ? undefined : canonicalJson(otlp);
    if (key === this.current?.key) return;
    const old = this.current;
    this.current = undefined;
    this.spans.tracer = undefined;
    if (old) await old.tracer.shutdown().catch((err: Error) => this.log.warn({ err: err.message }, "telemetry: flushing spans failed"));
    if (key === undefined || otlp === undefined) {
      if (old) this.log.info("telemetry: span export stopped");
      return;
    }
    try {
      const { loadOtlpTracer } = await import("./otlp-tracer.js");
      const tracer = await loadOtlpTracer(otlp, this.version, this.log, this.scrub);
      if (this.closed) return void (await tracer.shutdown());
      this.current = { key, tracer };
      this.spans.tracer = tracer;
      this.log.info({ endpoint: redactUrl(otlp.endpoint) }, "telemetry: exporting spans over OTLP/HTTP");
    } catch (err) {
      this.log.error({ err: (err as Error).message }, "telemetry: could not load the OpenTelemetry SDK; no spans are exported");
    }
  }
}
