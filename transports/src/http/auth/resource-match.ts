import { OAuthError, PROTOCOL_DEFAULTS, quote } from "@mcpd/protocol";
import { urlLabel } from "../../url-label.js";

/**
 * The canonical URI of an MCP server (RFC 8707 section 2, as the MCP authorization spec uses it): scheme
 * and host lower-cased (URL does that), no query or fragment (either could carry a secret, and a resource
 * indicator must not have a fragment), no trailing slash: `https://mcp.example.com/mcp`,
 * `https://mcp.example.com`.
 */
export function canonicalResource(url: URL): string {
  const path = url.pathname === "/" ? "" : url.pathname.replace(/\/+$/, "");
  return `${url.protocol}//${url.host}${path}`;
}

/**
 * Whether the `resource` a protected resource metadata document declares covers the server at
 * `serverUrl`: same scheme, host and port, and its path is the server's path or a parent of it at a
 * `/` boundary (a document for `https://h/` covers `https://h/mcp`; one for `https://h/a` does not cover
 * `https://h/ab`).
 */
export function resourceCovers(resource: string, serverUrl: URL): boolean {
  let declared: URL;
  try {
    declared = new URL(resource);
  } catch {
    return false;
  }
  if (declared.origin !== serverUrl.origin || declared.hash !== "") return false;
  const base = canonicalResource(declared);
  const server = canonicalResource(serverUrl);
  return server === base || server.startsWith(`${base}/`);
}

/**
 * Checks the metadata's `resource` against the server before anything is sent to an authorization
 * server: a mismatch means the metadata is for another resource (or forged), and a token obtained with
 * it could be sent where it does not belong.
 * @throws OAuthError (`MCPD_OAUTH_RESOURCE_MISMATCH`) naming both.
 */
export function checkResource(resource: string, serverUrl: URL): void {
  if (resourceCovers(resource, serverUrl)) return;
  throw new OAuthError(
    "MCPD_OAUTH_RESOURCE_MISMATCH",
    `the protected resource metadata of ${urlLabel(serverUrl)} is for another resource (${JSON.stringify(quote(resource, PROTOCOL_DEFAULTS.quotedTextChars))}); ` +
      "refusing to authorize: its authorization server could hand out tokens meant for elsewhere",
  );
}
