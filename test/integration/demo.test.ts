// Guards the README promise: config/default.json as shipped (the demo scenario) shows a firing and a resolved alert within ~40 s.
import { afterEach, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { describeAlerts, makeTempDir, startAppWithConfig, type TestApp } from "./harness.js";

const DEADLINE_MS = 40_000;

let current: TestApp | undefined;
afterEach(async () => {
  await current?.stop();
  current = undefined;
});

it(
  "the shipped default config fires and resolves an alert within 40 s of start",
  async () => {
    const dir = makeTempDir();
    const { config } = loadConfig({ env: {}, argvOverrides: { "server.port": "0", "state.dir": dir } });
    expect(config.upstream).toMatchObject({ url: "simulator", simulator: { scenario: "demo" } });
    const t = (current = await startAppWithConfig(config, { dir }));
    const remainingMs = (): number => Math.max(1, t.startedAtMs + DEADLINE_MS - Date.now());

    const fired = await t.waitForAlert((e) => e.alert.status === "firing", remainingMs(), "a firing alert");
    const resolved = await t.waitForAlert(
      (e) => e.alert.status === "resolved",
      remainingMs(),
      "a resolved alert",
    );
    expect(resolved.seq).toBeGreaterThan(fired.seq);
    // the first alert of the demo is the BTC/USD spike seen by the 10 s price_change rule
    expect(fired.alert).toMatchObject({ rule: "price_change", labels: { pair: "BTC/USD" } });
    expect(Date.now() - t.startedAtMs, describeAlerts(t.alertEvents())).toBeLessThan(DEADLINE_MS);
  },
  DEADLINE_MS + 10_000,
);
