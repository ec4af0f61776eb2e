import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { TestDaemon } from "../e2e/harness.js";
import { waitFor } from "../helpers/process.js";

/** The daemon's HTTP front end as `mcpd status` reports it, with the token read from its file. */
export interface HttpFrontInfo {
  /** The aggregate endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  token: string;
  tokenFile: string;
  status: any;
}

/** Reads the front end's URL and token from a running test daemon (waits until it listens). */
export async function httpFront(d: TestDaemon): Promise<HttpFrontInfo> {
  const c = await d.control();
  let http: any;
  try {
    await waitFor(
      async () => {
        http = (await c.request("mcpd/status")).result?.http;
        return http?.url;
      },
      { timeoutMs: 20_000, intervalMs: 50, message: "the HTTP front end to listen" },
    );
  } catch (err) {
    throw new Error(`HTTP front end not listening: ${JSON.stringify(http)}`, { cause: err });
  } finally {
    c.close();
  }
  const token = readFileSync(http.tokenFile, "utf8").trim();
  return { url: http.url, origin: new URL(http.url).origin, token, tokenFile: http.tokenFile, status: http };
}

/** Headers every request to the front end needs. */
export function authHeaders(front: HttpFrontInfo): Record<string, string> {
  return { authorization: `Bearer ${front.token}` };
}

export type HttpKind = "streamable" | "sse";

/**
 * An official SDK Client connected to the front end over Streamable HTTP or legacy SSE, at `path`
 * (`/mcp`, `/servers/<name>/mcp`; the SSE form is derived: `/sse`, `/servers/<name>/sse`).
 */
export async function sdkClient(
  front: HttpFrontInfo,
  kind: HttpKind,
  path: string,
  capabilities: Record<string, unknown> = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport | SSEClientTransport }> {
  const headers = authHeaders(front);
  const client = new Client({ name: `sdk-${kind}`, version: "1.0.0" }, { capabilities });
  let transport: StreamableHTTPClientTransport | SSEClientTransport;
  if (kind === "streamable") {
    transport = new StreamableHTTPClientTransport(new URL(path, front.origin), { requestInit: { headers } });
  } else {
    const ssePath = path.replace(/\/mcp$/, "/sse");
    transport = new SSEClientTransport(new URL(ssePath, front.origin), {
      requestInit: { headers },
      eventSourceInit: {
        fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
      },
    });
  }
  await client.connect(transport);
  return { client, transport };
}

/** A raw JSON-RPC POST to the front end; returns the response (body not read). */
export function post(front: HttpFrontInfo, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(new URL(path, front.origin), {
    method: "POST",
    headers: {
      ...authHeaders(front),
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Opens a Streamable HTTP session with a raw initialize; returns its id. */
export async function openSession(front: HttpFrontInfo, path = "/mcp", capabilities: Record<string, unknown> = {}): Promise<string> {
  const r = await post(front, path, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "raw-http", version: "1" } },
  });
  if (r.status !== 200) throw new Error(`initialize: HTTP ${r.status} ${await r.text()}`);
  const id = r.headers.get("mcp-session-id");
  await r.text();
  if (!id) throw new Error("initialize answered without Mcp-Session-Id");
  return id;
}

/** Reads SSE events from a response body as they come: `next()` resolves with the next one. */
export function sseReader(res: Response): {
  next(timeoutMs?: number): Promise<{ id?: string; event?: string; data: string; retry?: number }>;
  cancel(): Promise<void>;
} {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  return {
    async next(timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const end = buf.indexOf("\n\n");
        if (end >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const ev: { id?: string; event?: string; data: string; retry?: number } = { data: "" };
          const data: string[] = [];
          for (const line of block.split("\n")) {
            const i = line.indexOf(":");
            const field = i < 0 ? line : line.slice(0, i);
            const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
            if (field === "id") ev.id = value;
            else if (field === "event") ev.event = value;
            else if (field === "data") data.push(value);
            else if (field === "retry") ev.retry = Number(value);
          }
          ev.data = data.join("\n");
          return ev;
        }
        const left = deadline - Date.now();
        if (left <= 0) throw new Error("no SSE event in time");
        let timer: NodeJS.Timeout | undefined;
        const chunk = await Promise.race([
          reader.read(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error("no SSE event in time")), left);
          }),
        ]).finally(() => clearTimeout(timer));
        if (chunk.done) throw new Error("SSE stream ended");
        buf += chunk.value;
      }
    },
    cancel: () => reader.cancel().catch(() => {}),
  };
}
