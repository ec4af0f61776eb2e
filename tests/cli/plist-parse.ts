/**
 * A small, strict parser for XML property lists, for tests on machines without `plutil`: it checks
 * that the XML is well formed (every tag closed in order, entities valid, nothing stray) and that the
 * plist structure is valid (dict keys alternate with values), and returns the value.
 * @throws Error naming the offset of the first problem.
 */
export function parsePlist(xml: string): unknown {
  let pos = 0;
  const fail = (what: string): never => {
    throw new Error(`plist: ${what} at offset ${pos}`);
  };
  const skipWs = (): void => {
    while (pos < xml.length && /\s/.test(xml[pos] as string)) pos++;
  };
  const decode = (text: string): string =>
    text.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-z]+);|&/g, (m, ent: string | undefined) => {
      if (ent === undefined) return fail("bare &");
      const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
      if (ent.startsWith("#x")) return String.fromCodePoint(parseInt(ent.slice(2), 16));
      if (ent.startsWith("#")) return String.fromCodePoint(parseInt(ent.slice(1), 10));
      return named[ent] ?? fail(`unknown entity ${m}`);
    });

  type Tag = { name: string; close: boolean; selfClosing: boolean };
  const readTag = (): Tag => {
    if (xml[pos] !== "<") fail("expected a tag");
    const end = xml.indexOf(">", pos);
    if (end < 0) fail("unterminated tag");
    const body = xml.slice(pos + 1, end);
    pos = end + 1;
    const m = /^(\/?)([A-Za-z][\w.-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)$/.exec(body);
    if (!m) return fail(`malformed tag <${body}>`);
    return { name: m[2] as string, close: m[1] === "/", selfClosing: m[4] === "/" };
  };
  const readText = (): string => {
    const end = xml.indexOf("<", pos);
    if (end < 0) fail("unterminated element");
    const text = xml.slice(pos, end);
    pos = end;
    return decode(text);
  };
  const expectClose = (name: string): void => {
    const t = readTag();
    if (!t.close || t.name !== name) fail(`expected </${name}>, found <${t.close ? "/" : ""}${t.name}>`);
  };

  const readValue = (): unknown => {
    skipWs();
    const t = readTag();
    if (t.close) fail(`unexpected </${t.name}>`);
    if (t.selfClosing) {
      if (t.name === "true") return true;
      if (t.name === "false") return false;
      if (t.name === "dict") return {};
      if (t.name === "array") return [];
      if (t.name === "string") return "";
      return fail(`unexpected <${t.name}/>`);
    }
    switch (t.name) {
      case "string": {
        const s = readText();
        expectClose("string");
        return s;
      }
      case "integer": {
        const s = readText().trim();
        if (!/^-?\d+$/.test(s)) fail(`bad integer ${s}`);
        expectClose("integer");
        return Number(s);
      }
      case "array": {
        const out: unknown[] = [];
        for (;;) {
          skipWs();
          if (xml.startsWith("</", pos)) break;
          out.push(readValue());
        }
        expectClose("array");
        return out;
      }
      case "dict": {
        const out: Record<string, unknown> = {};
        for (;;) {
          skipWs();
          if (xml.startsWith("</", pos)) break;
          const k = readTag();
          if (k.name !== "key" || k.close || k.selfClosing) fail("expected <key> in dict");
          const key = readText();
          expectClose("key");
          if (Object.hasOwn(out, key)) fail(`duplicate key ${key}`);
          out[key] = readValue();
        }
        expectClose("dict");
        return out;
      }
      default:
        return fail(`unknown element <${t.name}>`);
    }
  };

  skipWs();
  if (xml.startsWith("<?xml", pos)) {
    const end = xml.indexOf("?>", pos);
    if (end < 0) fail("unterminated XML declaration");
    pos = end + 2;
  }
  skipWs();
  if (xml.startsWith("<!DOCTYPE", pos)) {
    const end = xml.indexOf(">", pos);
    pos = end + 1;
  }
  skipWs();
  const root = readTag();
  if (root.name !== "plist" || root.close) fail("expected <plist>");
  const value = readValue();
  skipWs();
  expectClose("plist");
  skipWs();
  if (pos !== xml.length) fail("content after </plist>");
  return value;
}
