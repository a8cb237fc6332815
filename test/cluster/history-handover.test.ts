// The handover's price points (in-memory bucket): a member releasing a key, or stopping, writes its targets' recent
// points in the key's record; the next owner seeds them; a record without points still loads; bad points are counted.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createAlertHandover } from "../../src/cluster/alert-handover.js";
import type { HistoryRejection } from "../../src/cluster/history-handover.js";
import { NO_ALERTS } from "../../src/domain/alert-handover.js";
import { createMonitorState, observe, type MonitorState } from "../../src/domain/monitor.js";
import type { PricePoint } from "../../src/domain/price-history.js";
import { decodePricePoints, MAX_ENCODED_POINTS_CHARS } from "../../src/domain/price-points-codec.js";
import type { MonitorRunner } from "../../src/pipeline/monitor-runner.js";
import { checkpointJson } from "../../src/state/alert-checkpoint.js";
import { BTC_OFF, obs, pairPrice, rule, T0 } from "../domain/helpers.js";
import { memoryBucket, owningMember } from "./handover-fakes.js";

const KEY = "pair:BTC/USD";
const keyOf = (targetId: string): string | undefined => (targetId === BTC_OFF.id ? KEY : undefined);
const rules = [rule("price_change", { windowMs: 10_000, market: "offchain" }, { threshold: 0.05 })];
const NOW_MS = T0 + 11_000;
const settle = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** An engine that polled BTC/USD at 100 once a second for 12 s. */
function polledEngine(): MonitorState {
  const state = createMonitorState();
  for (let atMs = T0; atMs <= NOW_MS; atMs += 1_000)
    observe(state, obs.off(pairPrice("100", atMs), atMs), rules, atMs);
  return state;
}

/** A runner over `engine` that records the points it is seeded with (only what the handover uses of a runner). */
function seededRunner(engine: MonitorState, seeds: [string, readonly PricePoint[]][]): MonitorRunner {
  const runner: Partial<MonitorRunner> = {
    adopt: () => undefined,
    release: () => undefined,
    state: () => engine,
    seedHistory: (targetId, points) => seeds.push([targetId, points]),
  };
  return runner as MonitorRunner;
}

/** A handover by `memberId` owning what `owned()` gives over `bucket`, counting refusals into `rejected`. */
function handoverOf(
  memberId: string,
  bucket: ReturnType<typeof memoryBucket>,
  owned: () => readonly string[],
  rejected: HistoryRejection[] = [],
) {
  // not a literal in place: a handover that first reads the log to its end (readThrough) takes it, this one ignores it
  const deps = {
    readThrough: () => Promise.resolve(true),
    readThroughPatienceMs: 60_000,
    member: owningMember(bucket, owned),
    memberId,
    keyOfTarget: () => keyOf,
    lastSeq: () => 0,
    journaledAfter: () => [],
    unpublished: () => false,
    nowMs: () => NOW_MS,
    logger: pino({ level: "silent" }),
    restrict: () => undefined,
    historyRejected: (reason: HistoryRejection) => rejected.push(reason),
  };
  return createAlertHandover(deps);
}

/** The times of the points `KEY`'s record carries for BTC/USD (none: no `history` field). */
function recordedTimes(bucket: ReturnType<typeof memoryBucket>): number[] | null {
  const text = bucket.records.get(KEY)?.text;
  const record = text === undefined ? {} : (JSON.parse(text) as { history?: Record<string, string> });
  const encoded = record.history?.[BTC_OFF.id];
  return encoded === undefined ? null : decodePricePoints(encoded).map((point) => point.atMs);
}

/** The times a member is expected to hand over: the history's points a 10 s window can still use. */
const expectedTimes = Array.from({ length: 11 }, (_, i) => T0 + 1_000 + i * 1_000);

describe("the price points of a handover", () => {
  it("a member losing a key writes its targets' points; the next owner seeds its targets with them", async () => {
    const bucket = memoryBucket();
    let ownedByOld: readonly string[] = [KEY];
    const old = handoverOf("m1", bucket, () => ownedByOld);
    old.attach(seededRunner(polledEngine(), []));
    await settle(50);
    expect(recordedTimes(bucket)).toBeNull(); // a checkpoint while held carries no points
    ownedByOld = [];
    old.request();
    await settle(50);
    expect(recordedTimes(bucket)).toEqual(expectedTimes);

    const seeds: [string, readonly PricePoint[]][] = [];
    const next = handoverOf("m2", bucket, () => [KEY]);
    next.attach(seededRunner(createMonitorState(), seeds));
    await settle(50);
    // the claim keeps the points in the record, for a next owner should the key move on before they are used
    expect(recordedTimes(bucket)).toEqual(expectedTimes);
    await Promise.all([old.stop(), next.stop()]);
    expect(seeds.map(([id, points]) => [id, points.map((point) => point.atMs)])).toEqual([
      [BTC_OFF.id, expectedTimes],
    ]);
  });

  it("a member stopping (SIGTERM) writes every key it holds with its points", async () => {
    const bucket = memoryBucket();
    const handover = handoverOf("m1", bucket, () => [KEY]);
    handover.attach(seededRunner(polledEngine(), []));
    await settle(50);
    await handover.stop();
    expect(recordedTimes(bucket)).toEqual(expectedTimes);
  });

  it("adopts a record without points (an older version, a kill -9) and seeds nothing", async () => {
    const bucket = memoryBucket();
    await bucket.write(KEY, checkpointJson({ lastSeq: 0, engine: NO_ALERTS }, T0, { memberId: "m0" }), 0);
    const seeds: [string, readonly PricePoint[]][] = [];
    const rejected: HistoryRejection[] = [];
    const handover = handoverOf("m2", bucket, () => [KEY], rejected);
    handover.attach(seededRunner(createMonitorState(), seeds));
    await settle(50);
    await handover.stop();
    expect({ seeds, rejected }).toEqual({ seeds: [], rejected: [] });
    expect(JSON.parse(bucket.records.get(KEY)?.text ?? "{}")).toMatchObject({ memberId: "m2" });
  });

  it.each([
    ["a target's points not in the format", { [BTC_OFF.id]: "1;8;x;0:1" }, ["malformed"]],
    ["a target's points not text", { [BTC_OFF.id]: 5 }, ["malformed"]],
    ["a history that is not an object", [1, 2], ["malformed"]],
    [
      "a target's points over the cap",
      { [BTC_OFF.id]: `1;8;0;0:1${",1:1".repeat(MAX_ENCODED_POINTS_CHARS)}` },
      ["oversized"],
    ],
    ["points of a target of another key (ignored)", { "offchain:ETH/USD": "1;8;0;0:1" }, []],
  ])("refuses %s: counted, logged, and the key still adopted", async (_, history, reasons) => {
    const bucket = memoryBucket();
    const text = checkpointJson({ lastSeq: 0, engine: NO_ALERTS }, T0, { memberId: "m0", history });
    await bucket.write(KEY, text, 0);
    const seeds: [string, readonly PricePoint[]][] = [];
    const rejected: HistoryRejection[] = [];
    const handover = handoverOf("m2", bucket, () => [KEY], rejected);
    handover.attach(seededRunner(createMonitorState(), seeds));
    await settle(50);
    expect(handover.owns(KEY)).toBe(true);
    await handover.stop();
    expect({ seeds, rejected }).toEqual({ seeds: [], rejected: reasons });
  });
});
