import { ACCEPT_POST } from "../http-wire.js";
import { oauthFetch, type OAuthHttp } from "./oauth-http.js";
import { parseBearerChallenge, type BearerChallenge } from "./www-authenticate.js";

/**
 * Asks an MCP server what authorization it wants, as a client's first request would: an `initialize`
 * POSTed without credentials (a server of any era checks authorization before it reads the body).
 * Resolves with the `Bearer` challenge of a 401 or 403 answer (its `resource_metadata` and `scope` guide
 * discovery), or undefined when it answered otherwise. A session the server opened for it is ended.
 * @throws the network error; `signal.reason`.
 */
export async function probeChallenge(http: OAuthHttp, serverUrl: URL, signal?: AbortSignal): Promise<BearerChallenge | undefined> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "mcpd", version: "0.1.0" } },
  });
  const res = await oauthFetch(http, serverUrl, {
    method: "POST",
    headers: { "content-type": "application/json", accept: ACCEPT_POST },
    body,
    signal,
  });
  if (res.status === 401 || res.status === 403) return (await parseBearerChallenge(res.headers.get("www-authenticate") ?? undefined)) ?? {};
  const session = res.headers.get("mcp-session-id");
  if (session !== null && res.ok)
    await oauthFetch(http, serverUrl, { method: "DELETE", headers: { "mcp-session-id": session }, signal }).catch(() => {});
  return undefined;
}
