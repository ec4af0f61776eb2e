/**
 * A stdio MCP server written for one test, for answers no fixture gives (a line nested 100,000 deep, a
 * member given twice): it answers `initialize` itself (capabilities `{tools: {}}`), every other request
 * with the line its `answer` code returns for the request `m` (an empty result when it returns nothing),
 * and exits on stdin EOF.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Writes the server script into `dir` and returns its path.
 * @param answer the body of a JavaScript function of the parsed request `m` returning the answer line
 *   (without its newline), e.g. `if (m.method === "tools/list") return '{"jsonrpc":"2.0","id":' + m.id + ',"result":{"tools":[]}}';`
 */
export function writeScriptedServer(dir: string, name: string, answer: string): string {
  const file = join(dir, `${name}-server.mjs`);
  writeFileSync(
    file,
    `const answer = (m) => {
${answer}
};
let buf = "";
const out = (s) => process.stdout.write(s + "\\n");
process.stdin.setEncoding("utf8");
process.stdin.on("end", () => process.exit(0));
process.stdin.on("data", (c) => {
  buf += c;
  let i;
  while ((i = buf.indexOf("\\n")) >= 0) {
    const m = JSON.parse(buf.slice(0, i));
    buf = buf.slice(i + 1);
    if (m.id === undefined) continue;
    if (m.method === "initialize") out(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: ${JSON.stringify(name)}, version: "1" } } }));
    else out(answer(m) ?? JSON.stringify({ jsonrpc: "2.0", id: m.id, result: {} }));
  }
});
`,
  );
  return file;
}
