/**
 * A URL as the transports name it in messages and logs: `scheme://host/path`, never its userinfo, and its
 * query (if any) as `?<redacted>`: either may carry a token, and a transport cannot tell which parameter
 * does. A label to tell which server, not the URL (nothing in it can be reused). The daemon's `redactUrl`
 * is a different thing: the whole URL as configured with only its secret parts masked, shown to its owner.
 */
export function urlLabel(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}${url.search ? "?<redacted>" : ""}`;
}
