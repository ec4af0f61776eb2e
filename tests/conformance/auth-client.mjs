#!/usr/bin/env node
// An MCP conformance client for the `auth/*` scenarios, built on mcpd's HttpTransport and its OAuth
// client: `node auth-client.mjs <server-url>` with MCP_CONFORMANCE_SCENARIO set, and for some scenarios
// MCP_CONFORMANCE_CONTEXT (JSON: client_id, client_secret, private_key_pem, signing_algorithm).
// Tokens and the registration live in memory; the "browser" follows the authorization redirect with
// fetch, which lands on the transport's loopback listener. Exit 0: the client did its part (the
// tool judges what the servers saw); scenarios that expect a refusal end with exit 1.
import { HttpTransport } from "@mcpd/transports";
import { withSession } from "./client-session.mjs";

const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
// The URL the basic-cimd scenario expects as the client id (mcpd's Client ID Metadata Document).
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";

const log = (...args) => console.error(`[mcpd-conformance ${scenario}]`, ...args);

/** The `auth` settings a user would configure for this scenario's server. */
function settings() {
  if (scenario === "auth/client-credentials-jwt") {
    return {
      grant: "client_credentials",
      clientId: context.client_id,
      privateKey: context.private_key_pem,
      signingAlgorithm: context.signing_algorithm,
    };
  }
  if (scenario === "auth/client-credentials-basic") {
    return { grant: "client_credentials", clientId: context.client_id, clientSecret: context.client_secret };
  }
  return {
    clientMetadataUrl: CLIENT_METADATA_URL,
    ...(context.client_id ? { clientId: context.client_id } : {}),
    ...(context.client_secret ? { clientSecret: context.client_secret } : {}),
  };
}

function memoryProvider() {
  let tokens;
  const registrations = new Map();
  return {
    settings: settings(),
    tokens: () => tokens,
    saveTokens: (t) => void (tokens = t),
    registration: (issuer) => registrations.get(issuer),
    saveRegistration: (issuer, r) => void (r ? registrations.set(issuer, r) : registrations.delete(issuer)),
    async redirect(authorizationUrl, ctx) {
      log(`authorizing (${ctx.reason}; scopes: ${ctx.scopes.join(" ") || "(none)"})`);
      // The scenario's authorization server approves at once and redirects to our loopback listener.
      const res = await browserGet(authorizationUrl);
      await res.text();
      log(`redirect followed: HTTP ${res.status}`);
    },
  };
}

/**
 * A GET as a browser makes it: retried once when the connection it reused was closed by the server before
 * any answer (the keep-alive race: the suite's servers close idle sockets after Node's 5 s, and a loaded
 * machine can reuse one just then), as browsers do; any other failure is the flow's.
 */
async function browserGet(url) {
  try {
    return await fetch(url, { redirect: "follow" });
  } catch (err) {
    const code = err?.cause?.code;
    if (code !== "UND_ERR_SOCKET" && code !== "ECONNRESET") throw err;
    log(`retrying the authorization request once (${code}: ${err.cause.message})`);
    return await fetch(url, { redirect: "follow" });
  }
}

// The revision the suite runs the scenario at (0.2.x sets it): a 2026 server takes no `initialize`, and
// every request carries its `_meta` envelope, which the transport mirrors into the 2026 headers.
const VERSION = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? "";
const MODERN = VERSION.startsWith("2026-");
// A request's deadline; the first one includes the whole authorization, which a loaded machine slows.
const TIMEOUT_MS = 60_000;

/** A session at the 2026 wire: no handshake, each request with the envelope. */
async function withModernSession(options, fn) {
  const transport = new HttpTransport({ type: "http", url, timeout: TIMEOUT_MS }, options);
  transport.onError = (err) => log("transport error:", err.message);
  await transport.connect();
  const meta = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "mcpd-conformance-client", version: "0.1.0" },
  };
  try {
    await fn({ request: (method, params = {}) => transport.request(method, { ...params, _meta: meta }) });
  } finally {
    await transport.close();
  }
}

async function main() {
  const run = async (transport) => {
    const { tools } = await transport.request("tools/list");
    log("tools:", tools.map((t) => t.name).join(", ") || "(none)");
    if (tools[0]) {
      const result = await transport.request("tools/call", { name: tools[0].name, arguments: {} });
      log("tool result:", JSON.stringify(result.content));
    }
  };
  if (MODERN) await withModernSession({ auth: memoryProvider() }, run);
  else await withSession(url, { auth: memoryProvider() }, log, run, TIMEOUT_MS);
}

try {
  await main();
  process.exit(0);
} catch (err) {
  log("failed:", err?.message ?? String(err), err?.cause ? `(cause: ${err.cause.message ?? err.cause})` : "");
  process.exit(1);
}
