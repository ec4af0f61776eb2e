/**
 * The session every conformance client opens: mcpd's HttpTransport (with `options`, e.g. an OAuth
 * provider) connected to `url`, initialized, `fn` run on it, closed. `timeoutMs` bounds each request (an
 * OAuth client's first one includes the whole authorization).
 */
import { HttpTransport } from "@mcpd/transports";

export async function withSession(url, options, log, fn, timeoutMs = 20_000) {
  const transport = new HttpTransport({ type: "http", url, timeout: timeoutMs }, options);
  transport.onError = (err) => log("transport error:", err.message);
  await transport.connect();
  try {
    const init = await transport.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "mcpd-conformance-client", version: "0.1.0" },
    });
    log("initialized:", JSON.stringify(init.serverInfo), init.protocolVersion);
    await transport.notify("notifications/initialized");
    await fn(transport);
  } finally {
    await transport.close();
  }
}
