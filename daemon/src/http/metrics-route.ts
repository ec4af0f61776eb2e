import type { ServerResponse } from "node:http";
import { WireCode } from "@mcpd/protocol";
import type { MetricsPage } from "../metrics/prometheus.js";
import { sendError } from "./http-respond.js";

/** Answers `GET /metrics` with the daemon's metrics page; 404 when the daemon serves none. */
export async function serveMetrics(res: ServerResponse, metrics: (() => Promise<MetricsPage>) | undefined): Promise<void> {
  const page = await metrics?.();
  if (!page) return sendError(res, 404, WireCode.InvalidRequest, "Not found: this daemon serves no metrics", "MCPD_HTTP_NOT_FOUND");
  res.writeHead(200, { "content-type": page.contentType, "content-length": Buffer.byteLength(page.body), "cache-control": "no-store" });
  res.end(page.body);
}
