/**
 * Spans of relayed requests exported over OTLP/HTTP (JSON encoding) with the OpenTelemetry SDK, which is
 * imported here only, when `mcpd.telemetry.otlp` is set ({@link loadOtlpTracer}): a daemon without the
 * setting never loads it.
 */
import type { Attributes, Context, Span, SpanContext, Tracer } from "@opentelemetry/api";
import type { BasicTracerProvider, ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { isObject, type JsonObject, type Logger, type RequestId } from "@mcpd/protocol";
import type { OtlpSettings } from "../config/config-schema.js";
import { redactUrl } from "../secrets/index.js";
import type { CallTarget, CallTracer, TracedCall } from "../router/ports.js";
import { callAttributes, callOutcome, formatTraceparent, parseTraceparent, sentAttributes, spanName } from "./call-attributes.js";

type Api = typeof import("@opentelemetry/api");
type ExportResult = Parameters<Parameters<SpanExporter["export"]>[1]>[0];

/** Masks the secrets a text may hold (the daemon's SecretScrubber: config values, tokens). */
export type Scrub = (text: string) => string;

/**
 * A {@link CallTracer} exporting each relayed request's span; {@link shutdown} sends what is left. What a
 * span carries that a server or a client wrote (names, URIs, an error's message) is scrubbed of secrets
 * first, as every other way out of the daemon is: the collector is another party.
 */
export class OtlpTracer implements CallTracer {
  constructor(
    private readonly api: Api,
    private readonly provider: BasicTracerProvider,
    private readonly tracer: Tracer,
    private readonly scrub: Scrub,
  ) {}

  start(server: string, method: string, params: JsonObject | undefined): TracedCall {
    const { api } = this;
    const raw = params?._meta;
    const meta = isObject(raw) ? raw : undefined;
    const parent = parseTraceparent(meta?.traceparent);
    let ctx: Context = api.ROOT_CONTEXT;
    if (parent !== undefined) {
      const remote: SpanContext = { traceId: parent.traceId, spanId: parent.spanId, traceFlags: parent.flags, isRemote: true };
      ctx = api.trace.setSpanContext(ctx, remote);
    }
    const attributes: Attributes = scrubbed(callAttributes(server, method, params), this.scrub);
    const span = this.tracer.startSpan(this.scrub(spanName(method, params)), { kind: api.SpanKind.CLIENT, attributes }, ctx);
    // Not sampled (the client's flags said so): the server keeps the client's context, as without export.
    // A `_meta` that is no object is the server's to refuse, as the client sent it.
    if (!span.isRecording() || (raw !== undefined && meta === undefined)) return new Call(api, span, params, this.scrub);
    const own = span.spanContext();
    const traceparent = formatTraceparent({ traceId: own.traceId, spanId: own.spanId, flags: own.traceFlags });
    return new Call(api, span, { ...params, _meta: { ...meta, traceparent } }, this.scrub);
  }

  /** Sends the spans not yet sent and stops (a reload that changes or drops the setting, or shutdown). */
  async shutdown(): Promise<void> {
    await this.provider.shutdown();
  }
}

class Call implements TracedCall {
  constructor(
    private readonly api: Api,
    private readonly span: Span,
    readonly params: JsonObject | undefined,
    private readonly scrub: Scrub,
  ) {}

  sent(requestId: RequestId, to: CallTarget): void {
    this.span.setAttributes(
      sentAttributes(requestId, {
        sessionId: to.sessionId,
        protocolVersion: to.client?.initializeResult?.protocolVersion,
        transport: to.config.transport.type,
      }),
    );
  }

  end(error: unknown, result?: JsonObject): void {
    const o = callOutcome(error, result);
    this.span.setAttributes({ ...o.attributes, "mcpd.outcome": o.outcome });
    if (o.outcome !== "ok")
      this.span.setStatus({ code: this.api.SpanStatusCode.ERROR, ...(o.message ? { message: this.scrub(o.message) } : {}) });
    this.span.end();
  }
}

/**
 * Loads the OpenTelemetry SDK and makes a tracer exporting to `settings.endpoint`, in batches. Export
 * failures are logged (once until an export succeeds again), never thrown: a relay never waits for them.
 * @param version mcpd's version (`service.version`)
 * @param scrub masks secrets in what the spans carry
 */
export async function loadOtlpTracer(settings: OtlpSettings, version: string, log: Logger, scrub: Scrub): Promise<OtlpTracer> {
  const [api, sdk, otlp, resources] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
  ]);
  const exporter = new LoggingExporter(
    new otlp.OTLPTraceExporter({ url: settings.endpoint, headers: { ...settings.headers }, timeoutMillis: settings.exportTimeoutMs }),
    redactUrl(settings.endpoint),
    log,
  );
  const provider = new sdk.BasicTracerProvider({
    resource: resources.resourceFromAttributes({ "service.name": settings.serviceName, "service.version": version }),
    spanProcessors: [
      new sdk.BatchSpanProcessor(exporter, {
        scheduledDelayMillis: settings.batchDelayMs,
        exportTimeoutMillis: settings.exportTimeoutMs,
        maxQueueSize: settings.maxQueueSpans,
        maxExportBatchSize: Math.min(512, settings.maxQueueSpans),
      }),
    ],
  });
  return new OtlpTracer(api, provider, provider.getTracer("mcpd", version), scrub);
}

/** `attributes` with every string value scrubbed. */
function scrubbed(attributes: Record<string, string | number | boolean>, scrub: Scrub): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(attributes)) out[k] = typeof v === "string" ? scrub(v) : v;
  return out;
}

/** An exporter that logs a failed export (once per run of failures) and passes everything else on. */
class LoggingExporter implements SpanExporter {
  private failing = false;

  constructor(
    private readonly inner: SpanExporter,
    private readonly endpoint: string,
    private readonly log: Logger,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      // ExportResultCode.SUCCESS is 0.
      const failed = result.code !== 0;
      if (failed && !this.failing)
        this.log.warn({ endpoint: this.endpoint, err: result.error?.message, spans: spans.length }, "telemetry: OTLP export failed");
      else if (!failed && this.failing) this.log.info({ endpoint: this.endpoint }, "telemetry: OTLP export works again");
      this.failing = failed;
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
