/**
 * The transports' one way of naming a URL in a message or a log line (HTTP, legacy SSE, WebSocket, OAuth):
 * no userinfo, no query, whatever the URL carries.
 */
import { describe, expect, it } from "vitest";
import { urlLabel } from "../src/url-label.js";

describe("urlLabel", () => {
  it.each([
    ["https://api.example.com/mcp", "https://api.example.com/mcp"],
    ["https://user:pa55@api.example.com:8443/mcp", "https://api.example.com:8443/mcp"],
    ["http://127.0.0.1:3001/mcp?region=eu&token=t0k", "http://127.0.0.1:3001/mcp?<redacted>"],
    ["wss://u@h/ws?x=1#frag", "wss://h/ws?<redacted>"],
  ])("%s -> %s", (url, label) => {
    expect(urlLabel(new URL(url))).toBe(label);
  });
});
