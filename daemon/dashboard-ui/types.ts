/** What the page reads of `mcpd status` (see protocol/src/control/status-types.ts). */
export interface ServerRow {
  name: string;
  state: string;
  stateReason: string | null;
  enabled: boolean;
  /** The MCP era mcpd speaks to it ("2025" or "2026"); null before it is known. */
  era: string | null;
  transport: string;
  mode: string | null;
  pid: number | null;
  uptimeMs: number | null;
  restarts: number;
  requests: number;
  errors: number;
  inFlight: number;
  latencyMs: { p50: number | null; p95: number | null; p99: number | null };
  lastError: string | null;
  lastStderr: string | null;
  tools: number;
}

export interface ClientRow {
  id: string;
  view: string;
  server: string | null;
  profile: string | null;
  clientInfo: { name?: string; version?: string } | null;
  inFlight: number;
  face: string;
}

export interface Status {
  daemon: { pid: number; version: string; uptimeMs: number };
  servers: ServerRow[];
  clients: ClientRow[];
  tables: { inFlight: number };
}

export interface Tool {
  name: string;
  exposedName?: string;
  description?: string;
  /** The configured profiles that select it. */
  profiles?: string[];
  inputSchema?: { properties?: Record<string, { type?: string; description?: string }>; required?: string[] };
}
