// End-to-end suite runner (npm run test:e2e): the built daemon, npm start, the bin wrapper's exits and a real browser, as processes.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/e2e/**/*.test.ts"],
    // minutes of real time: its own script (npm run test:incidents), which .ci/run runs too
    exclude: ["test/e2e/incidents.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // a browser page on a loaded 2-core machine: expect.poll's 1 s default would fail now and then (as vi.waitFor's
    // did, test/wait-for.ts); a met condition still returns at once
    expect: { poll: { timeout: 10_000 } },
    pool: "forks",
  },
});
