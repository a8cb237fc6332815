// Test runner configuration (npm test): unit and integration tests under test/; the e2e, reliability and cluster suites have their own.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: [
      "test/reliability/**",
      "test/e2e/**",
      "test/cluster/**/*.nats.test.ts",
      "node_modules/**",
      "dist/**",
    ],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    // no isolation: re-importing the module graph for each of ~170 files cost more than the tests
    // (531 s → 212 s at load ~20). Files share the worker's modules; no test mocks modules or changes the
    // process's globals, and src/domain/ holds no module-level state.
    isolate: false,
    // two workers on 2 cores: the daemon tests mostly wait on wall time (polls, windows, group timers), so a
    // second worker runs other files meanwhile (267 s → 162 s wall, two runs each, interleaved, at load 6-11;
    // each worker imports the graph once)
    maxWorkers: 2,
  },
});
