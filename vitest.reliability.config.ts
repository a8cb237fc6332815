// Reliability suite runner (npm run test:reliability): fault injection, WebSocket abuse, sink faults and kill -9 crashes.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/reliability/**/*.test.ts"],
    globalSetup: ["test/reliability/support/global-setup.ts"],
    pool: "forks",
    // --expose-gc lets the WebSocket suite measure heap growth after a full collection
    execArgv: ["--expose-gc"],
    // one suite at a time: http-flood times /healthz and cluster-kills runs five processes; side by side on
    // 2 cores each made the other's machine (a probe answered in 1.2 s under cluster-kills)
    maxWorkers: 1,
    testTimeout: 240_000,
    hookTimeout: 180_000,
    sequence: { concurrent: false },
  },
});
