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

    // the demo's BTC/USD spike, seen by the 10 s price_change rule (the on-chain deviation rule may fire first: both
    // are due ~10 s after start, and which wins depends on the start-up time against the first poll's phase)
    const fired = await t.waitForAlert(
      (e) =>
        e.alert.status === "firing" &&
        e.alert.rule === "price_change" &&
        e.alert.labels["pair"] === "BTC/USD",
      remainingMs(),
      "a firing price_change alert on BTC/USD",
    );
    await t.waitForAlert(
      (e) => e.alert.status === "resolved" && e.seq > fired.seq,
      remainingMs(),
      "a resolved alert after it",
    );
    expect(Date.now() - t.startedAtMs, describeAlerts(t.alertEvents())).toBeLessThan(DEADLINE_MS);
  },
  DEADLINE_MS + 10_000,
);
