import { describe, expect, it } from "vitest";
import { CONTROL_METHODS, McpdSelect } from "@mcpd/protocol";
import { CONTROL_HANDLERS } from "../../src/control/control-handlers.js";

describe("the daemon's control dispatcher", () => {
  it("has a handler for every declared control method and for nothing else (mcpd/select is the session's)", () => {
    const declared = CONTROL_METHODS.filter((d) => d !== McpdSelect).map((d) => d.method);
    expect(Object.keys(CONTROL_HANDLERS).sort()).toEqual([...declared].sort());
    expect(Object.keys(CONTROL_HANDLERS)).not.toContain(McpdSelect.method);
  });
});
