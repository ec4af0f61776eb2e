/**
 * The config file's JSON Schema, generated from the zod schema mcpd checks the file with: the published
 * file and docs/configuration.md's key table are what it gives, every config the repository shows loads
 * as it did before the schema and passes the JSON Schema, and the JSON Schema refuses what mcpd refuses
 * or warns of, at the same key.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { configJsonSchema } from "../../src/config/config-file-schema.js";
import { KEY_TABLE_BEGIN, KEY_TABLE_END, renderKeyTable } from "../../src/config/config-key-table.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { configExamples, loadExample, REPO } from "./config-examples.js";

const schema = configJsonSchema();
const validate = new Ajv2020({ allErrors: true, strict: true }).compile(schema);

/** The JSON Schema's complaints about `doc`, as `<path>: <keyword> <detail>`. */
function schemaErrors(doc: unknown): string[] {
  if (validate(doc)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath}: ${e.keyword} ${JSON.stringify(e.params)}`);
}

const FILE = "/cfg/config.json";
const parse = (doc: unknown) => parseConfig(JSON.stringify(doc), FILE, { HOME: "/home/ann" });

describe("the published JSON Schema and the docs' key table", () => {
  it("daemon/config.schema.json is what the schema gives (run `npm run docs:config` after changing it)", () => {
    const published = readFileSync(join(REPO, "daemon", "config.schema.json"), "utf8");
    expect(published).toBe(`${JSON.stringify(schema, null, 2)}\n`);
  });

  it("docs/configuration.md's table of keys is what the schema gives (run `npm run docs:config`)", () => {
    const doc = readFileSync(join(REPO, "docs", "configuration.md"), "utf8");
    const start = doc.indexOf(KEY_TABLE_BEGIN);
    const end = doc.indexOf(KEY_TABLE_END);
    expect(start, "the generated block's markers").toBeGreaterThanOrEqual(0);
    expect(doc.slice(start, end + KEY_TABLE_END.length)).toBe(renderKeyTable(schema));
  });

  it("lists every key the loader reads, with its bounds and default", () => {
    const table = renderKeyTable(schema);
    expect(table).toContain("| `mcpServers.<server>.maxConcurrency` | integer, 1 to 10000 | `64` |");
    expect(table).toContain("| `mcpd.http.port` | integer, 0 to 65535 | `7767` |");
    expect(table).toContain("| `mcpServers.<server>.restart.windowMs` | integer, 1 to 2147483647 | `60000` |");
    expect(table).toContain("| `mcpd.profiles.<profile>.servers` | array of string |");
  });
});

describe("every config the repository shows", () => {
  const examples = configExamples();

  it("finds the docs' examples, examples/config.json and the import fixtures", () => {
    const ids = examples.map((e) => e.id);
    expect(ids.filter((id) => id.startsWith("docs/configuration.md")).length).toBeGreaterThanOrEqual(4);
    expect(ids.filter((id) => id.startsWith("README.md")).length).toBeGreaterThanOrEqual(4);
    expect(ids).toContain("examples/config.json");
    expect(ids).toContain("tests/cli/fixtures/project/.mcp.json");
  });

  it("loads with the same meaning as before the schema: servers, hashes, settings, warnings and errors (recorded with the hand-written checks)", async () => {
    const loaded = Object.fromEntries(examples.map((e) => [e.id, loadExample(e)]));
    await expect(`${JSON.stringify(loaded, null, 2)}\n`).toMatchFileSnapshot("./config-examples.loaded.json");
  });

  it("passes the JSON Schema when mcpd loads it, but for the unknown keys mcpd warns of", () => {
    for (const example of examples) {
      const loaded = loadExample(example) as { error?: string; warnings?: string[] };
      if (loaded.error !== undefined) continue;
      const unknown = (loaded.warnings ?? []).flatMap(
        (w) => /: "(\w+)" is not supported and is ignored|unknown key "(\w+)"/.exec(w)?.slice(1, 3) ?? [],
      );
      const flagged = schemaErrors(example.value).map((e) => /"additionalProperty":"(\w+)"/.exec(e)?.[1] ?? e);
      expect(flagged, example.id).toEqual(unknown.filter((k) => k !== undefined));
    }
  });
});

describe("the JSON Schema refuses what mcpd refuses or warns of, at the same key", () => {
  it("a misspelt key: an editor flags it, mcpd warns naming the key it is close to", () => {
    const doc = { mcpServers: { github: { command: "npx", timout: 5000 } } };
    expect(schemaErrors(doc)).toEqual([`/mcpServers/github: additionalProperties {"additionalProperty":"timout"}`]);
    expect(parse(doc).warnings).toEqual([`${FILE}: server "github": unknown key "timout" ignored (did you mean "timeout"?)`]);
  });

  it("a value out of bounds or of the wrong type, in a server, in mcpd.defaults and in mcpd.http", () => {
    const doc = {
      mcpServers: { s: { command: "x", maxConcurrency: 0, restart: { windowMs: "1m" } } },
      mcpd: { defaults: { startup: "later" }, http: { port: 70_000 } },
    };
    expect(schemaErrors(doc).map((e) => e.split(":")[0])).toEqual([
      "/mcpServers/s/maxConcurrency",
      "/mcpServers/s/restart/windowMs",
      "/mcpd/defaults/startup",
      "/mcpd/http/port",
    ]);
    expect(() => parse(doc)).toThrow(
      [
        `${FILE}: "mcpd.http.port" must be an integer from 0 to 65535 (0: any free port), got 70000`,
        `${FILE}: "mcpd.defaults": "startup" must be one of "eager", "lazy", got "later"`,
        `${FILE}: server "s": "maxConcurrency" must be an integer from 1 to 10000, got 0`,
        `${FILE}: server "s": "restart.windowMs" must be a positive integer (milliseconds), got "1m"`,
      ].join("\n"),
    );
  });

  it("a server name mcpd refuses", () => {
    const doc = { mcpServers: { "bad name": { command: "x" } } };
    expect(schemaErrors(doc).some((e) => e.startsWith("/mcpServers: propertyNames"))).toBe(true);
    expect(() => parse(doc)).toThrow(/server "bad name": invalid name/);
  });
});

describe('"$schema"', () => {
  it("is accepted by mcpd without a warning, and by the JSON Schema", () => {
    const doc = { $schema: "./config.schema.json", mcpServers: { s: { command: "x" } } };
    expect(parse(doc).warnings).toEqual([]);
    expect(schemaErrors(doc)).toEqual([]);
  });

  it("is a string: another value is warned of (and still ignored, as before the schema)", () => {
    expect(parse({ $schema: 5, mcpServers: {} }).warnings).toEqual([
      `${FILE}: "$schema" should be a string (the schema's path or URL), got 5; ignored`,
    ]);
    expect(schemaErrors({ $schema: 5 })).toEqual([`/$schema: type {"type":"string"}`]);
  });
});
