/**
 * The bundled `mcpd` command holds the other @mcpd packages' code, so the daemon package must list the npm
 * packages that code imports (regression: installed from the tarballs, the bundle could not find
 * eventsource-parser, a dependency of @mcpd/protocol only). The bundle script refuses a bundle whose
 * imports the daemon package does not declare, or declares at another version.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dependencyFaults, packageOf } from "../../daemon/scripts/bundle-deps.mjs";
import { ROOT } from "../cli/cli-harness.js";

const manifest = (dir: string): { dependencies?: Record<string, string> } =>
  JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8"));

describe("the bundle's npm imports and the daemon package's dependencies", () => {
  it("names an import the daemon package does not declare, and a version that differs from the package using it", () => {
    const imports = [
      { file: "dist-a.js", id: "eventsource-parser" },
      { file: "config-b.js", id: "undici" },
      { file: "daemon-c.js", id: "ws" },
    ];
    expect(dependencyFaults(imports, { undici: "7.30.2", ws: "8.22.0" }, { "eventsource-parser": "3.1.1", ws: "8.23.0" })).toEqual([
      "dist-a.js imports eventsource-parser, which daemon/package.json does not list in dependencies",
      "daemon/package.json lists ws 8.22.0, but the package that uses it wants 8.23.0",
    ]);
    expect(packageOf("@scope/pkg/sub/path.js")).toBe("@scope/pkg");
    expect(packageOf("pino/file")).toBe("pino");
  });

  it("the repository's daemon package declares every npm dependency of the packages its bundle holds, at their versions", () => {
    const wanted = Object.assign({}, ...["protocol", "transports", "client-sdk"].map((d) => manifest(d).dependencies ?? {}));
    const npm = Object.keys(wanted).filter((name) => !name.startsWith("@mcpd/"));
    expect(npm.length).toBeGreaterThan(0);
    const imports = npm.map((id) => ({ file: "any.js", id }));
    expect(dependencyFaults(imports, manifest("daemon").dependencies ?? {}, wanted)).toEqual([]);
  });
});
