import { LATEST_MODERN_VERSION, withEnvelope, type JsonRpcRequest } from "@mcpd/protocol";
import { ACCEPT_POST } from "../http-wire.js";
import { modernHeaders } from "../modern-headers.js";
import { oauthFetch, type OAuthHttp } from "./oauth-http.js";
import { parseBearerChallenge, type BearerChallenge } from "./www-authenticate.js";

/** Who the probe says it is (its 2026 envelope). */
const PROBE_CLIENT = { clientInfo: { name: "mcpd", version: "0.1.0" } };

/**
 * Asks an MCP server what authorization it wants before mcpd knows its era: a 2026-07-28
 * `server/discover` POSTed without credentials. A server of either era checks authorization before it
 * reads the body, so one that wants a token answers 401 (or 403) with its `Bearer` challenge (its
 * `resource_metadata` and `scope` guide discovery); the era is settled by the session opened once a token
 * exists. No `initialize`: a server that speaks only 2026-07-28 would refuse it, and a 2025 one would open
 * a session for nobody. Resolves with the challenge, or undefined when the server answered otherwise.
 * @throws the network error; `signal.reason`.
 */
export async function probeChallenge(http: OAuthHttp, serverUrl: URL, signal?: AbortSignal): Promise<BearerChallenge | undefined> {
  const request: JsonRpcRequest = {
    jsonrpc: "2.0",
    id: 0,
    method: "server/discover",
    params: withEnvelope({}, LATEST_MODERN_VERSION, undefined, PROBE_CLIENT),
  };
  const res = await oauthFetch(http, serverUrl, {
    method: "POST",
    headers: { "content-type": "application/json", accept: ACCEPT_POST, ...modernHeaders(request) },
    body: JSON.stringify(request),
    signal,
  });
  if (res.status !== 401 && res.status !== 403) return undefined;
  return (await parseBearerChallenge(res.headers.get("www-authenticate") ?? undefined)) ?? {};
}
