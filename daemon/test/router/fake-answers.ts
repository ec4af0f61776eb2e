/**
 * What a fake server answers when no script says otherwise: its lists, and answers to calls that name the
 * server and what was asked (so a test sees which server answered, and with which name and arguments).
 */
import { WireCode, type JsonObject, type ServerCapabilities } from "@mcpd/protocol";
import type { FakeCall } from "./fake-call.js";

/** What a default answer reads of its server: its name and lists. */
interface Lists {
  readonly name: string;
  readonly tools: readonly unknown[];
  readonly prompts: readonly unknown[];
  readonly resources: readonly unknown[];
  readonly resourceTemplates: readonly unknown[];
}

/** Which capability each method needs, as the real upstream client checks before sending. */
export const METHOD_CAPABILITY: Readonly<Record<string, keyof ServerCapabilities>> = {
  "tools/list": "tools",
  "tools/call": "tools",
  "prompts/list": "prompts",
  "prompts/get": "prompts",
  "resources/list": "resources",
  "resources/templates/list": "resources",
  "resources/read": "resources",
  "resources/subscribe": "resources",
  "resources/unsubscribe": "resources",
  "completion/complete": "completions",
  "logging/setLevel": "logging",
};

/** The text a default `tools/call` answer carries: `<server>/<tool> <arguments as JSON>`. */
export function callText(server: string, tool: string, args: unknown = {}): string {
  return `${server}/${tool} ${JSON.stringify(args)}`;
}

/** The default answer to one call, by method; an unknown method is -32601, as a server answers it. */
export function defaultAnswer(server: Lists, call: FakeCall): void {
  const p = call.params ?? {};
  const result = answerOf(server, call.method, p);
  if (result === undefined) call.fail({ code: WireCode.MethodNotFound, message: `Method not found: ${call.method}` });
  else call.answer(result);
}

function answerOf(server: Lists, method: string, p: JsonObject): JsonObject | undefined {
  switch (method) {
    case "tools/list":
      return { tools: [...server.tools] as unknown as JsonObject[] };
    case "prompts/list":
      return { prompts: [...server.prompts] as unknown as JsonObject[] };
    case "resources/list":
      return { resources: [...server.resources] as unknown as JsonObject[] };
    case "resources/templates/list":
      return { resourceTemplates: [...server.resourceTemplates] as unknown as JsonObject[] };
    case "tools/call":
      return { content: [{ type: "text", text: callText(server.name, String(p.name), p.arguments ?? {}) }] };
    case "prompts/get":
      return { messages: [{ role: "user", content: { type: "text", text: `${server.name}/${String(p.name)}` } }] };
    case "resources/read":
      return { contents: [{ uri: String(p.uri), text: `${server.name}:${String(p.uri)}` }] };
    case "completion/complete":
      return { completion: { values: [server.name] } };
    case "ping":
    case "resources/subscribe":
    case "resources/unsubscribe":
    case "logging/setLevel":
      return {};
    default:
      return undefined;
  }
}
