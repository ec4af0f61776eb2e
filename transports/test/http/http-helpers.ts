/**
 * Shared pieces of the HttpTransport tests: the fixture HTTP server (tests/fixtures/http) and a
 * transport factory, both cleaned up after each test.
 */
import { afterEach } from "vitest";
import { startHttpFixture, type HttpFixture, type HttpFixtureState } from "../../../tests/fixtures/http/http-fixture.mjs";
import { HttpTransport } from "../../src/http/http-transport.js";
import type { HttpTransportOptions } from "../../src/http/http-config.js";
import type { HttpServerConfig } from "../../src/transport.js";

export { waitFor } from "../../../tests/helpers/process.js";
export type { HttpFixture };

export const INIT_PARAMS = {
  protocolVersion: "2025-06-18",
  capabilities: { roots: {} },
  clientInfo: { name: "http-test", version: "1.0.0" },
};

const fixtures: HttpFixture[] = [];
const transports: HttpTransport[] = [];

afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close().catch(() => {})));
  await Promise.all(fixtures.splice(0).map((f) => f.close()));
});

/** Starts a fixture server closed after the test. */
export async function fixture(options: Partial<HttpFixtureState> = {}): Promise<HttpFixture> {
  const f = await startHttpFixture(options);
  fixtures.push(f);
  return f;
}

/** A connected transport closed after the test. */
export async function transport(
  config: Partial<HttpServerConfig> & { url: string },
  options: HttpTransportOptions = {},
): Promise<HttpTransport> {
  const t = new HttpTransport({ type: "http", ...config } as HttpServerConfig, options);
  transports.push(t);
  await t.connect();
  return t;
}

/** A transport that ran initialize + notifications/initialized. */
export async function initialized(
  config: Partial<HttpServerConfig> & { url: string },
  options: HttpTransportOptions = {},
): Promise<HttpTransport> {
  const t = await transport(config, options);
  await t.request("initialize", INIT_PARAMS);
  await t.notify("notifications/initialized");
  return t;
}

/** Rejection of `promise`, failing the test if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (err) {
    return err as Error & Record<string, unknown>;
  }
  throw new Error("expected a rejection, got a result");
}
