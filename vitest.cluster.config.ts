// Cluster suite runner (npm run test:cluster): real nats-server processes (single node and a 3-node cluster) and daemons as child processes.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/cluster/**/*.nats.test.ts"],
    pool: "forks",
    maxWorkers: 1,
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
