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
  },
});
