// The subscriber API of the real daemon: WebSocket hello, late subscribe, price ticks, `since` resume, /readyz and /metrics.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AlertEvent, PriceEvent } from "../../src/domain/events.js";
import { VERSION } from "../../src/version.js";
import { http, startTestApp, type JsonObject, type TestApp } from "./harness.js";
import { parsePrometheusText, sampleValue } from "./prometheus.js";
import { WsClient, type Frame } from "./ws-client.js";

let current: TestApp | undefined;
const clients: WsClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await current?.stop();
  current = undefined;
});

async function start(layer: JsonObject | ((dir: string) => JsonObject)): Promise<TestApp> {
  current = await startTestApp(layer);
  return current;
}

async function connect(t: TestApp): Promise<{ readonly client: WsClient; readonly hello: Frame }> {
  const connected = await WsClient.connect(t.wsUrl);
  clients.push(connected.client);
  return connected;
}

type AlertFrame = Extract<Frame, { type: "alert" }>;
type SubscribedFrame = Extract<Frame, { type: "subscribed" }>;
type PriceFrame = Extract<Frame, { type: "price" }>;

// Fires on the first poll for every pair quoted above 1 USD (BTC, ETH), never for STRK (~0.17).
const LEVEL_RULE = { kind: "price_level", direction: "above", threshold: 1 };

describe("WebSocket API of the real daemon", () => {
  it("greets with protocol, version, the last journaled seq and the configured heartbeat", async () => {
    const t = await start({
      monitors: { offchain: [{ pair: "BTC/USD", periodMs: 200 }] },
      server: { heartbeatMs: 15_000 },
    });
    const { hello } = await connect(t);
    expect(hello).toEqual({
      type: "hello",
      protocol: 1,
      version: VERSION,
      seq: t.app.events.lastSeq(),
      heartbeatMs: 15_000,
    });
    // the `started` lifecycle event is journaled before any client can connect
    expect(t.app.events.lastSeq()).toBeGreaterThanOrEqual(1);
  });

  it("a client subscribing late receives the alerts already firing that match its filter", async () => {
    const t = await start({
      monitors: {
        offchain: ["BTC/USD", "ETH/USD", "STRK/USD"].map((pair) => ({ pair, periodMs: 100 })),
      },
      rules: [LEVEL_RULE],
    });
    const eth = await t.waitForAlert((e) => e.alert.labels["pair"] === "ETH/USD", 3_000, "ETH/USD level");
    const btc = await t.waitForAlert((e) => e.alert.labels["pair"] === "BTC/USD", 3_000, "BTC/USD level");
    const { client } = await connect(t);

    const onlyEth = (await client.request({
      op: "subscribe",
      id: "1",
      channels: ["alerts"],
      pairs: ["eth/usd"],
    })) as SubscribedFrame;
    expect(onlyEth).toMatchObject({ type: "subscribed", pairs: ["ETH/USD"], seq: t.app.events.lastSeq() });
    expect(onlyEth.active).toEqual([eth.alert]);

    const byRule = (await client.request({
      op: "subscribe",
      id: "2",
      pairs: [],
      rules: ["price_level"],
    })) as SubscribedFrame;
    // oldest first, as they fired
    expect(byRule.active).toEqual([eth, btc].sort((x, y) => x.seq - y.seq).map((e) => e.alert));
    expect(new Set(byRule.active.map((a) => a.fingerprint))).toEqual(
      new Set(t.app.events.activeAlerts().map((a) => a.fingerprint)),
    );

    const otherRule = (await client.request({
      op: "subscribe",
      id: "3",
      rules: ["stale_price"],
    })) as SubscribedFrame;
    expect(otherRule.active).toEqual([]);
  });

  it("streams price ticks on the prices channel for the subscribed pairs only", async () => {
    const t = await start({
      monitors: { offchain: ["BTC/USD", "ETH/USD"].map((pair) => ({ pair, periodMs: 100 })) },
    });
    let btcTicksOnBus = 0;
    const counting = t.app.events.events$.subscribe((e) => {
      if (e.type === "price" && e.tick.pair === "BTC/USD") btcTicksOnBus += 1;
    });
    try {
      const { client } = await connect(t);
      const subscribed = (await client.request({
        op: "subscribe",
        id: "p",
        channels: ["prices"],
        pairs: ["ETH/USD"],
      })) as SubscribedFrame;
      expect(subscribed).toMatchObject({ channels: ["prices"], pairs: ["ETH/USD"], active: [] });
      const ticks: PriceFrame[] = [];
      for (let i = 0; i < 5; i++)
        ticks.push((await client.next((f) => f.type === "price", 3_000)) as PriceFrame);
      for (const { tick } of ticks) {
        expect(tick).toMatchObject({ pair: "ETH/USD", market: "offchain", entryType: "spot" });
        expect(tick.price).toMatch(/^\d+(\.\d+)?$/);
        expect(tick.numSources).toBeGreaterThan(0);
        expect(Number.isFinite(Date.parse(tick.observedAt))).toBe(true);
      }
      // BTC/USD was polled just as often, but none of it reached this client
      expect(btcTicksOnBus).toBeGreaterThan(0);
      expect(client.frames.filter((f) => f.type === "price" && f.tick.pair !== "ETH/USD")).toEqual([]);
      expect(client.frames.filter((f) => f.type === "alert" || f.type === "lifecycle")).toEqual([]);
    } finally {
      counting.unsubscribe();
    }
  });

  it("resumes with `since` across a forced disconnect while alerts fire: no gap, no duplicate", async () => {
    const vaults = ["pragma-btc-vault", "pragma-eth-vault"];
    const t = await start({
      monitors: { vaults: vaults.map((id) => ({ id, periodMs: 100 })) },
      // every cycle flips the alert twice: no flap damping here
      rules: [{ kind: "vault_status", flapWindowMs: 0 }],
    });
    /** Pause a vault until its alert fires, then reopen it until the alert resolves. */
    const cycle = async (vault: string): Promise<void> => {
      const afterSeq = t.app.events.lastSeq();
      const mine = (e: AlertEvent): boolean => e.seq > afterSeq && e.alert.labels["vault"] === vault;
      const id = await t.injectFault({ kind: "vaultPaused", vault });
      const fired = await t.waitForAlert(
        (e) => mine(e) && e.alert.status === "firing",
        3_000,
        `${vault} paused`,
      );
      await t.removeFault(id);
      await t.waitForAlert(
        (e) => mine(e) && e.seq > fired.seq && e.alert.status === "resolved",
        3_000,
        `${vault} reopened`,
      );
    };
    const cycleAll = async (): Promise<void> => {
      await Promise.all(vaults.map(cycle));
    };

    const a = (await connect(t)).client;
    await a.request({ op: "subscribe", id: "a", channels: ["alerts"], since: 0 });
    const running = cycleAll();
    await a.next((f) => f.type === "alert", 3_000);
    await a.next((f) => f.type === "alert", 3_000);
    a.terminate(); // mid-stream: the cycles keep firing and resolving
    await a.closedPromise;
    const lastA = Math.max(...a.alerts().map((f) => f.seq));
    await running;
    await cycleAll();
    const missed = t.alertEvents().filter((e) => e.seq > lastA).length;
    expect(missed).toBeGreaterThanOrEqual(4);

    // reconnect while more alerts fire, so the replay and live delivery overlap
    const live = cycleAll();
    const b = (await connect(t)).client;
    const resumed = (await b.request({
      op: "subscribe",
      id: "b",
      channels: ["alerts"],
      since: lastA,
    })) as SubscribedFrame;
    await live;
    await cycleAll();
    const lastSeq = t.alertEvents().at(-1)!.seq;
    await b.next((f) => f.type === "alert" && f.seq === lastSeq, 3_000);

    const journal = t.alertEvents();
    const seqsOf = (frames: readonly AlertFrame[]): number[] => frames.map((f) => f.seq);
    expect(seqsOf(a.alerts())).toEqual(journal.filter((e) => e.seq <= lastA).map((e) => e.seq));
    expect(seqsOf(b.alerts())).toEqual(journal.filter((e) => e.seq > lastA).map((e) => e.seq));
    expect(b.alerts()).toEqual(journal.filter((e) => e.seq > lastA));
    expect(b.frames.filter((f) => f.type === "gap")).toEqual([]);
    // B got both a replayed part (up to the seq of its subscribe reply) and a live part
    expect(seqsOf(b.alerts()).some((seq) => seq <= resumed.seq)).toBe(true);
    expect(seqsOf(b.alerts()).some((seq) => seq > resumed.seq)).toBe(true);
    expect(journal.length).toBeGreaterThanOrEqual(16);
  });

  it("/readyz is 503 until the first poll of every monitor completed, then 200", async () => {
    const t = await start((dir) => {
      const scenario = join(dir, "slow-start.json");
      const slow = { kind: "latency", latencyMs: 1_500, endpoint: "pair_price" };
      writeFileSync(
        scenario,
        JSON.stringify({ name: "slow-start", faults: [{ atMs: 0, durationMs: 3_000, fault: slow }] }),
      );
      return {
        upstream: { simulator: { scenario } },
        monitors: { offchain: [{ pair: "BTC/USD", periodMs: 200 }] },
      };
    });
    const before = await http("GET", `${t.httpUrl}/readyz`);
    expect(before.status).toBe(503);
    expect(JSON.parse(before.text)).toEqual({
      status: "not_ready",
      reasons: ["1 target(s) waiting for their first poll: offchain:BTC/USD:spot:median:1s"],
    });
    expect(t.app.readiness().ready).toBe(false);
    expect((await http("GET", `${t.httpUrl}/healthz`)).status).toBe(200);

    const first = (await t.waitForEvent((e) => e.type === "price", 5_000, "the first poll")) as PriceEvent;
    expect(Date.parse(first.tick.observedAt) - t.startedAtMs).toBeGreaterThanOrEqual(1_000);
    const after = await http("GET", `${t.httpUrl}/readyz`);
    expect(after.status).toBe(200);
    expect(JSON.parse(after.text)).toEqual({ status: "ready" });
  });

  it("/metrics is valid Prometheus text with polls per endpoint, firing alerts by rule/severity and ws clients", async () => {
    const t = await start({
      monitors: {
        offchain: [{ pair: "BTC/USD", periodMs: 100 }],
        onchain: [{ pair: "BTC/USD", network: "starknet-mainnet", periodMs: 200 }],
        vaults: [{ id: "pragma-btc-vault", periodMs: 200 }],
      },
      rules: [
        LEVEL_RULE,
        { ...LEVEL_RULE, id: "level_onchain", market: "onchain", severity: "critical" },
        { kind: "vault_status" },
      ],
    });
    await t.injectFault({ kind: "vaultPaused", vault: "pragma-btc-vault" });
    for (const rule of ["price_level", "vault_status"])
      await t.waitForAlert((e) => e.alert.rule === rule && e.alert.severity === "critical", 3_000, rule);
    await t.waitForAlert((e) => e.alert.severity === "warning", 3_000, "offchain level");
    await connect(t);

    const response = await http("GET", `${t.httpUrl}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parsePrometheusText(response.text);
    for (const endpoint of ["pair_price", "onchain", "vault"])
      expect(
        sampleValue(samples, "pragma_monitor_polls_total", { endpoint, outcome: "ok" }),
        endpoint,
      ).toBeGreaterThan(0);
    const firing = (rule: string, severity: string): number | undefined =>
      sampleValue(samples, "pragma_monitor_alerts_firing", { rule, severity });
    expect(firing("price_level", "warning")).toBe(1);
    expect(firing("price_level", "critical")).toBe(1);
    expect(firing("vault_status", "critical")).toBe(1);
    expect(
      sampleValue(samples, "pragma_monitor_alert_transitions_total", {
        rule: "price_level",
        status: "firing",
        reason: "first",
      }),
    ).toBe(2);
    expect(sampleValue(samples, "pragma_monitor_ws_clients")).toBe(1);
    expect(sampleValue(samples, "pragma_monitor_targets", { kind: "offchain" })).toBe(1);
  });
});
