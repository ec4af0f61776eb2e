/**
 * `mcpd config schema` prints the config file's JSON Schema (the published daemon/config.schema.json); a
 * config pointing `"$schema"` at it loads as before; what an editor flags with it, the real `mcpd`
 * reports at the same key: a misspelt key (a warning naming the close match), a bad value (an error
 * that stops `mcpd start --foreground`).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliWorld } from "./cli-harness.js";

const PUBLISHED = fileURLToPath(new URL("../../daemon/config.schema.json", import.meta.url));

let world: CliWorld;
beforeEach(() => {
  world = new CliWorld();
});
afterEach(async () => {
  await world.dispose();
});

/** The schema as `mcpd config schema` prints it, saved beside the config, and a validator of it. */
async function printedSchema(): Promise<(doc: unknown) => string[]> {
  const r = await world.run(["config", "schema"]);
  expect(r.code, r.stderr).toBe(0);
  writeFileSync(join(world.root, "config.schema.json"), r.stdout);
  const validate = new Ajv2020({ allErrors: true }).compile(JSON.parse(r.stdout));
  return (doc) => (validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.keyword} ${JSON.stringify(e.params)}`));
}

describe("mcpd config schema", () => {
  it("prints the published JSON Schema of the config file", async () => {
    const r = await world.run(["config", "schema"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(readFileSync(PUBLISHED, "utf8"));
    expect(JSON.parse(r.stdout)).toMatchObject({ $schema: "https://json-schema.org/draft/2020-12/schema", type: "object" });
  });

  it('a config whose "$schema" points at it passes it and loads without a warning', async () => {
    const check = await printedSchema();
    const doc = { $schema: "./config.schema.json", mcpServers: { fx: world.fixture("fx") } };
    writeFileSync(world.configFile, JSON.stringify(doc));
    expect(check(doc)).toEqual([]);
    const r = await world.run(["config", "validate"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).not.toContain("warning");
    expect(r.stdout).toContain(`valid: ${world.configFile} (1 server)`);
  });

  it("a misspelt key: the schema refuses it where mcpd warns of it, naming the key it is close to", async () => {
    const check = await printedSchema();
    const doc = { $schema: "./config.schema.json", mcpServers: { fx: { ...world.fixture("fx"), timout: 5000 } } };
    writeFileSync(world.configFile, JSON.stringify(doc));
    expect(check(doc)).toEqual(['/mcpServers/fx additionalProperties {"additionalProperty":"timout"}']);
    const r = await world.run(["config", "validate"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`warning: ${world.configFile}: server "fx": unknown key "timout" ignored (did you mean "timeout"?)`);
  });

  it("a bad value: the schema refuses it at the key mcpd start --foreground names, and no daemon starts", async () => {
    const check = await printedSchema();
    const doc = { $schema: "./config.schema.json", mcpServers: { fx: { ...world.fixture("fx"), timeout: "30s" } } };
    writeFileSync(world.configFile, JSON.stringify(doc));
    expect(check(doc).map((e) => e.split(" ")[0])).toEqual(["/mcpServers/fx/timeout"]);
    const r = await world.run(["start", "--foreground"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${world.configFile}: server "fx": "timeout" must be a positive integer (milliseconds), got "30s"`);
    expect(world.processes()).toEqual([]);
  });
});
