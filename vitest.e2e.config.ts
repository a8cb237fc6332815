// End-to-end suite runner (npm run test:e2e): the built daemon, npm start, the bin wrapper's exits and a real browser, as processes.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/e2e/**/*.test.ts"],
    // minutes of real time: its own script (npm run test:incidents), which .ci/run runs too
    exclude: ["test/e2e/incidents.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
