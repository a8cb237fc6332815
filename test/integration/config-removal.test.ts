// An alert whose target or rule left the config resolves saying so: at start from restored state, and on reload (SIGHUP).
import { afterEach, expect, it } from "vitest";
import type { AlertEvent } from "../../src/domain/events.js";
import { buildConfig, makeTempDir, startAppWithConfig, type JsonObject, type TestApp } from "./harness.js";

const VAULTS = {
  monitors: {
    vaults: [
      { id: "pragma-btc-vault", periodMs: 100 },
      { id: "pragma-eth-vault", periodMs: 100 },
    ],
  },
  rules: [{ kind: "vault_status" }, { kind: "upstream_error", threshold: 3 }],
};

const running: TestApp[] = [];
afterEach(async () => {
  for (const t of running.splice(0)) await t.stop();
});

async function start(layer: JsonObject, dir: string, removeDir: boolean): Promise<TestApp> {
  const t = await startAppWithConfig(buildConfig(layer, dir), removeDir ? { dir } : {});
  running.push(t);
  return t;
}

/** Start on the vault config, pause pragma-btc-vault and wait until vault_status fires for it. */
async function firingVault(dir: string, removeDir: boolean): Promise<{ t: TestApp; fired: AlertEvent }> {
  const t = await start(VAULTS, dir, removeDir);
  await t.injectFault({ kind: "vaultPaused", vault: "pragma-btc-vault" });
  const fired = await t.waitForAlert(
    (e) => e.alert.status === "firing" && e.alert.rule === "vault_status",
    5_000,
    "vault_status firing",
  );
  return { t, fired };
}

const resolvedOf = (fired: AlertEvent) => (e: AlertEvent) =>
  e.seq > fired.seq && e.alert.fingerprint === fired.alert.fingerprint && e.alert.status === "resolved";

it("at start, a restored alert of a vault the new config does not have resolves as target_removed", async () => {
  const dir = makeTempDir();
  const first = await firingVault(dir, false);
  await first.t.stop();
  // the production-example case: same state dir, a config with neither the vault nor its rule
  const t = await start(
    { monitors: { offchain: [{ pair: "BTC/USD", periodMs: 1_000 }] }, rules: [] },
    dir,
    true,
  );
  const resolved = await t.waitForAlert(resolvedOf(first.fired), 5_000, "the restored vault alert resolving");
  expect(resolved.alert).toMatchObject({
    rule: "vault_status",
    labels: { vault: "pragma-btc-vault" },
    startsAt: first.fired.alert.startsAt,
    context: { resolvedBy: "target_removed" },
  });
  expect(resolved.alert.summary).toMatch(
    /^No longer monitored: its target was removed from the config \(last state: vault .* is paused.*\)$/,
  );
  expect(t.app.events.activeAlerts()).toEqual([]);
});

it("on reload, a firing alert whose rule was removed resolves as rule_removed, one whose target was removed as target_removed", async () => {
  const { t, fired } = await firingVault(makeTempDir(), true);
  // rule removed, vault kept
  await t.app.reload(
    buildConfig({ ...VAULTS, rules: [{ kind: "upstream_error", threshold: 3 }] }, makeTempDir()),
  );
  const byRule = await t.waitForAlert(resolvedOf(fired), 5_000, "resolve after the rule was removed");
  expect(byRule.alert.context).toMatchObject({ resolvedBy: "rule_removed" });
  expect(byRule.alert.summary).toMatch(
    /^No longer monitored: its rule was removed, disabled or no longer covers it/,
  );

  // rule back: fires again (the fault is still on); then the vault leaves the config
  await t.app.reload(buildConfig(VAULTS, makeTempDir()));
  const again = await t.waitForAlert(
    (e) =>
      e.seq > byRule.seq && e.alert.fingerprint === fired.alert.fingerprint && e.alert.status === "firing",
    5_000,
    "vault_status firing again",
  );
  await t.app.reload(
    buildConfig(
      { ...VAULTS, monitors: { vaults: [{ id: "pragma-eth-vault", periodMs: 100 }] } },
      makeTempDir(),
    ),
  );
  const byTarget = await t.waitForAlert(resolvedOf(again), 5_000, "resolve after the vault was removed");
  expect(byTarget.alert.context).toMatchObject({ resolvedBy: "target_removed" });
  expect(byTarget.alert.summary).toMatch(/^No longer monitored: its target was removed from the config/);
});
