// Scripted-incident suite runner (npm run test:incidents): the daemon as shipped against simulator outages, a
// market move and a publisher stop, one notification to open and one to close each (about 6 minutes).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/e2e/incidents.test.ts"],
    testTimeout: 780_000,
    hookTimeout: 240_000,
    pool: "forks",
  },
});
