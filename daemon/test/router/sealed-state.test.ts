import { describe, expect, it } from "vitest";
import { StateSealer } from "../../src/router/sealed-state.js";

const claims = { ref: "r1", bind: "socket:c1", exp: 2_000, method: "tools/call", target: "ask" };

describe("StateSealer (the requestState mcpd issues to 2026-era clients)", () => {
  it("opens its own state for the connection it was issued to, before it expires", () => {
    const s = new StateSealer();
    const state = s.seal(claims);
    expect(StateSealer.isOurs(state)).toBe(true);
    expect(s.open(state, "socket:c1", 1_000)).toEqual(claims);
  });

  it("refuses a state altered anywhere, one of another daemon (another key), another connection's, an expired one", () => {
    const s = new StateSealer();
    const state = s.seal(claims);
    const last = state.length - 1;
    for (const i of [...Array.from({ length: state.length }, (_, k) => k).filter((k) => k >= "mcpd.rs1.".length && k % 7 === 0), last]) {
      const altered = state.slice(0, i) + (state[i] === "A" ? "B" : "A") + state.slice(i + 1);
      if (altered !== state) expect(s.open(altered, "socket:c1", 1_000), `byte ${i}`).toBe("tampered");
    }
    // The last character's lowest bit is one no base64url decoder reads: the text itself is what counts.
    const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const lowBit = state.slice(0, -1) + B64[B64.indexOf(state.at(-1) as string) ^ 1];
    expect(s.open(lowBit, "socket:c1", 1_000)).toBe("tampered");
    expect(new StateSealer().open(state, "socket:c1", 1_000)).toBe("tampered");
    expect(s.open(state, "socket:c2", 1_000)).toBe("foreign");
    expect(s.open(state, "socket:c1", 2_000)).toBe("expired");
  });

  it("a server's own state is not mcpd's", () => {
    expect(StateSealer.isOurs("opaque-server-state")).toBe(false);
    expect(StateSealer.isOurs(undefined)).toBe(false);
  });
});
