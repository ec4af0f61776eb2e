import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { packagePath } from "../../infra/package-root.js";

/**
 * The headers every dashboard answer carries. The policy allows the dashboard's own script and style
 * alone: no inline script or style, nothing from elsewhere, no framing, forms posting nowhere.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
    "form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  // A page of another origin (another loopback port too) cannot load these answers, even as a script.
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-store",
};

/** The page's built files (dist/dashboard/, from daemon/dashboard-ui by `npm run build`), read once. */
const ASSETS: Record<string, { file: string; type: string }> = {
  "/dashboard/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/dashboard/app.css": { file: "app.css", type: "text/css; charset=utf-8" },
};
const loaded = new Map<string, Buffer>();

/** Whether `pathname` is one of the page's built files. */
export function isAsset(pathname: string): boolean {
  return Object.hasOwn(ASSETS, pathname);
}

/** Sends a built file; 404 when the build has not made it. */
export function sendAsset(res: ServerResponse, pathname: string): void {
  const a = ASSETS[pathname] as { file: string; type: string };
  let body = loaded.get(a.file);
  if (body === undefined) {
    try {
      body = readFileSync(packagePath("dist", "dashboard", a.file));
      loaded.set(a.file, body);
    } catch {
      return sendText(res, 404, "not built: run npm run build");
    }
  }
  res.writeHead(200, { ...SECURITY_HEADERS, "content-type": a.type, "content-length": body.length });
  res.end(body);
}

/** The page itself: the script builds everything else; the CSRF token travels in a meta element. */
export function sendPage(res: ServerResponse, csrf: string): void {
  const body = [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    `<meta name="mcpd-csrf" content="${csrf}">`,
    "<title>mcpd</title>",
    '<link rel="stylesheet" href="/dashboard/app.css">',
    '<script type="module" src="/dashboard/app.js"></script>',
    '</head><body><main id="app" aria-live="polite">Loading…</main></body></html>',
  ].join("\n");
  res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/** A plain-text answer (what a refused login or a missing session sees). */
export function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, ...headers, "content-type": "text/plain; charset=utf-8" });
  res.end(`${text}\n`);
}

/** A JSON answer of the dashboard's API. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { ...SECURITY_HEADERS, "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}
