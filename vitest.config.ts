import { defineConfig } from "vitest/config";

// One config for every workspace. Unit tests live beside each package (<pkg>/test/*.test.ts);
// cross-package and end-to-end tests live in tests/. Benchmarks and the soak run are never part of it.
export default defineConfig({
  test: {
    include: ["{protocol,transports,daemon,client-sdk}/test/**/*.test.ts", "tests/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**", "tests/bench/**", "tests/soak/**"],
    // Generous bounds: these machines are shared and loaded. Tests wait for events, never for sleeps.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    pool: "forks",
    // Most test time is spent waiting on child processes and sockets, not computing: on 2 cores vitest's
    // default (cores - 1 = one worker) leaves the machine idle. Three workers keep both cores busy.
    maxWorkers: 3,
    // Tests spawn daemon/bin/mcpd.js, which runs the bundled command: rebuild it from the dist/ just compiled.
    // The conformance suite 0.2.x needs Node 22: installed once into a cache directory (tests/helpers/node22-setup.ts).
    globalSetup: ["tests/helpers/bundle-cli-setup.ts", "tests/helpers/node22-setup.ts"],
    // Every daemon a test starts binds its HTTP front end to a free port, not the fixed default: tests run in parallel.
    env: { MCPD_HTTP_PORT: "0" },
    // The default reporter, then the ten slowest files (where the suite's time goes, printed in CI too).
    reporters: ["default", "./tests/helpers/slowest-files-reporter.ts"],
  },
});
