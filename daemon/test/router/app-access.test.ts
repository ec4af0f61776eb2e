/**
 * Which kinds of client use a shared server (router/app-access.ts): a UI session lives while a UI client
 * uses its server, and the shared session is parked while no other client does. Connections here are plain
 * objects shaped as the router's sessions; the real-process counterpart is tests/e2e/apps-ui-session.test.ts.
 */
import { describe, expect, it } from "vitest";
import { usedByUiClient, usedWithoutUi } from "../../src/router/app-access.js";
import type { Upstream } from "../../src/router/upstream-port.js";

const UI_CAPS = { extensions: { "io.modelcontextprotocol/ui": {} } };
const shared = { name: "app" } as Upstream;
const uiSession = { name: "app" } as Upstream;
const otherServer = { name: "other" } as Upstream;

type Conn = Parameters<typeof usedByUiClient>[0] extends Iterable<infer C> ? C : never;

/** A connection; `views` says whether its view shows the app server. */
function conn(over: Partial<Conn> & { viewsApp?: boolean } = {}): Conn {
  const { viewsApp = true, ...rest } = over;
  return {
    control: false,
    initialized: true,
    clientCapabilities: {},
    privates: undefined,
    modern: undefined,
    views: (h: Upstream) => h.name !== "app" || viewsApp,
    ...rest,
  };
}

describe("usedByUiClient and usedWithoutUi", () => {
  it("a connection that declared the UI extension in initialize is a UI client of the servers its view shows, never one without", () => {
    const c = conn({ clientCapabilities: UI_CAPS });
    expect([usedByUiClient([c], shared), usedWithoutUi([c], shared)]).toEqual([true, false]);
    const away = conn({ clientCapabilities: UI_CAPS, viewsApp: false });
    expect([usedByUiClient([away], shared), usedWithoutUi([away], shared)]).toEqual([false, false]);
  });

  it("an initialized connection without it uses the server without the extension; a control or uninitialized one does not count", () => {
    expect([usedByUiClient([conn()], shared), usedWithoutUi([conn()], shared)]).toEqual([false, true]);
    expect(usedWithoutUi([conn({ control: true })], shared)).toBe(false);
    expect(usedWithoutUi([conn({ initialized: false })], shared)).toBe(false);
    expect(usedWithoutUi([conn({ viewsApp: false })], shared)).toBe(false);
  });

  it("2026 era (no initialize): a connection holding the server's UI session is a UI client of it; one that does not, a client without the extension", () => {
    const modernUi = conn({ initialized: false, modern: {}, privates: new Set([uiSession]) });
    expect([usedByUiClient([modernUi], shared), usedWithoutUi([modernUi], shared)]).toEqual([true, false]);
    const modernPlain = conn({ initialized: false, modern: {}, privates: new Set([otherServer]) });
    expect([usedByUiClient([modernPlain], shared), usedWithoutUi([modernPlain], shared)]).toEqual([false, true]);
    // Holding the shared session itself (it is not a session of its own) makes no UI client.
    expect(usedByUiClient([conn({ initialized: false, modern: {}, privates: new Set([shared]) })], shared)).toBe(false);
  });

  it("no server, no use", () => {
    expect([usedByUiClient([conn({ clientCapabilities: UI_CAPS })], undefined), usedWithoutUi([conn()], undefined)]).toEqual([
      false,
      false,
    ]);
  });
});
