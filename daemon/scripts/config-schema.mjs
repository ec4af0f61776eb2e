/**
 * Writes the config file's JSON Schema to daemon/config.schema.json and its table of keys into
 * docs/configuration.md, both from daemon/src/config/config-file-schema.ts (run `npm run docs:config`,
 * which builds first). daemon/test/config/config-json-schema.test.ts fails when either differs from
 * what the schema gives.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const { configJsonSchema } = await import("../dist/config/config-file-schema.js");
const { renderKeyTable, replaceKeyTable } = await import("../dist/config/config-key-table.js");

const schema = configJsonSchema();
const schemaFile = fileURLToPath(new URL("../config.schema.json", import.meta.url));
writeIfChanged(schemaFile, `${JSON.stringify(schema, null, 2)}\n`);

const docFile = fileURLToPath(new URL("../../docs/configuration.md", import.meta.url));
const doc = readFileSync(docFile, "utf8");
writeIfChanged(docFile, replaceKeyTable(doc, renderKeyTable(schema)));

function writeIfChanged(file, text) {
  let before;
  try {
    before = readFileSync(file, "utf8");
  } catch {
    before = undefined;
  }
  if (before !== text) writeFileSync(file, text);
  console.log(`${file}: ${before === text ? "up to date" : "written"}`);
}
