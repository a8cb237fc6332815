// Reliability suite runner (npm run test:reliability): fault injection, WebSocket abuse, sink faults and kill -9 crashes.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/reliability/**/*.test.ts"],
    globalSetup: ["test/reliability/support/global-setup.ts"],
    pool: "forks",
    // --expose-gc lets the WebSocket suite measure heap growth after a full collection
    execArgv: ["--expose-gc"],
    maxWorkers: 2,
    testTimeout: 240_000,
    hookTimeout: 180_000,
    sequence: { concurrent: false },
  },
});
