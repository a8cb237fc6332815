// The handover's price points (in-memory bucket): a member releasing a key, or stopping, writes its targets' recent
// points in the key's record; the next owner seeds them; a record without points still loads; bad points are counted.
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAlertHandover, type AlertHandoverDeps } from "../../src/cluster/alert-handover.js";
import {
  capHistoryField,
  nextHistoryDueMs,
  RECORD_BUDGET_BYTES,
  type HistoryRejection,
} from "../../src/cluster/history-handover.js";
import { indexTargetKeys } from "../../src/cluster/target-keys.js";
import { NO_ALERTS } from "../../src/domain/alert-handover.js";
import { createMonitorState, exportHistories, observe, type MonitorState } from "../../src/domain/monitor.js";
import { PriceHistory, type PricePoint } from "../../src/domain/price-history.js";
import { decodePricePoints, MAX_ENCODED_POINTS_CHARS } from "../../src/domain/price-points-codec.js";
import type { MonitorRunner } from "../../src/pipeline/monitor-runner.js";
import { checkpointJson } from "../../src/state/alert-checkpoint.js";
import { BTC_OFF, obs, p, pairPrice, rule, T0 } from "../domain/helpers.js";
import { memoryBucket, owningMember } from "./handover-fakes.js";

const KEY = "pair:BTC/USD";
/** The key of each of `targetIds` is KEY. */
const ofKey = (targetIds: readonly string[]) => () =>
  indexTargetKeys(targetIds.map((id) => [id, KEY] as const));
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

/**
 * A handover by `memberId` owning what `owned()` gives over `bucket`, counting refusals into `rejected`; points
 * written only on release unless `extra` says otherwise.
 */
function handoverOf(
  memberId: string,
  bucket: ReturnType<typeof memoryBucket>,
  owned: () => readonly string[],
  rejected: HistoryRejection[] = [],
  extra: Partial<AlertHandoverDeps> = {},
) {
  // not a literal in place: a handover that first reads the log to its end (readThrough) takes it, this one ignores it
  const deps = {
    readThrough: () => Promise.resolve(true),
    readThroughPatienceMs: 60_000,
    member: owningMember(bucket, owned),
    memberId,
    targetKeys: ofKey([BTC_OFF.id]),
    keyOfLabels: () => () => undefined,
    lastSeq: () => 0,
    journaledAfter: () => [],
    unpublished: () => false,
    nowMs: () => NOW_MS,
    logger: pino({ level: "silent" }),
    restrict: () => undefined,
    historyRejected: (reason: HistoryRejection) => rejected.push(reason),
    historyCheckpointMs: 0,
    historyTrimmed: () => undefined,
    // every window here long enough for the periodic points (a test of the rule gives its own)
    leaseMs: 0,
    ...extra,
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

describe("when a key's points are next due (nextHistoryDueMs)", () => {
  it("is within one interval after now, at the key's own phase, and off (Infinity) at 0", () => {
    const dueMs = nextHistoryDueMs(KEY, NOW_MS, 10_000);
    expect(dueMs).toBeGreaterThan(NOW_MS);
    expect(dueMs).toBeLessThanOrEqual(NOW_MS + 10_000);
    expect(nextHistoryDueMs(KEY, dueMs, 10_000)).toBe(dueMs + 10_000);
    expect(nextHistoryDueMs(KEY, dueMs - 1, 10_000)).toBe(dueMs);
    expect(nextHistoryDueMs(KEY, NOW_MS, 0)).toBe(Number.POSITIVE_INFINITY);
  });

  it("spreads 1 500 keys over the interval: no second of a 10 s interval takes more than 1.5 times its share", () => {
    const perSecond = new Array<number>(10).fill(0);
    for (let i = 0; i < 1_500; i += 1) {
      const dueMs = nextHistoryDueMs(`pair:P${i}/USD`, T0, 10_000);
      perSecond[Math.floor((dueMs - T0 - 1) / 1_000)]! += 1;
    }
    expect(Math.max(...perSecond)).toBeLessThanOrEqual(225);
    expect(Math.min(...perSecond)).toBeGreaterThanOrEqual(75);
  });
});

describe("a record's budget (capHistoryField)", () => {
  const field = { a: "x".repeat(100), b: "y".repeat(1_000), c: "z".repeat(10) };

  it("keeps a field that fits whole", () => {
    expect(capHistoryField(field, 10_000)).toEqual({ field, trimmedTargets: 0 });
  });

  it("leaves out the largest targets first, within the budget", () => {
    const budgetBytes = 200;
    const capped = capHistoryField(field, budgetBytes);
    expect(capped).toEqual({ field: { a: field.a, c: field.c }, trimmedTargets: 1 });
    expect(Buffer.byteLength(`,"history":${JSON.stringify(capped.field)}`)).toBeLessThanOrEqual(budgetBytes);
    expect(capHistoryField(field, 13)).toEqual({ field: {}, trimmedTargets: 3 });
  });
});

/** Encoded points of a busy target: `count` points a second apart, prices moving, about 17 characters each. */
function busyPoints(count: number): string {
  return `1;8;${T0};${Array.from({ length: count }, (_, i) => `${i === 0 ? 0 : 1_000}:${1e10 + i * 7_919}`).join(",")}`;
}

describe("a whole record over its budget", () => {
  it("is written with the largest targets' points left out (counted), its alert state whole", async () => {
    const targets = busyTargets;
    const bucket = memoryBucket();
    await bucket.write(KEY, overBudgetRecord(), 0);
    expect(bucket.records.get(KEY)!.text.length).toBeGreaterThan(RECORD_BUDGET_BYTES);
    const trimmed: number[] = [];
    const seeds: [string, readonly PricePoint[]][] = [];
    const handover = handoverOf("m2", bucket, () => [KEY], [], {
      targetKeys: ofKey(targets),
      historyTrimmed: (count) => trimmed.push(count),
    });
    handover.attach(seededRunner(createMonitorState(), seeds));
    await settle(100);
    const text = bucket.records.get(KEY)!.text;
    const record = JSON.parse(text) as { memberId: string; engine: unknown; history: Record<string, string> };
    const kept = Object.keys(record.history);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(RECORD_BUDGET_BYTES);
    expect({ memberId: record.memberId, engine: record.engine }).toEqual({
      memberId: "m2",
      engine: NO_ALERTS,
    });
    expect(kept.length).toBeGreaterThan(20);
    expect(trimmed).toEqual([targets.length - kept.length]);
    // the largest (the last, with the most points) are the ones left out
    expect(kept).toEqual(targets.slice(0, kept.length));
    expect(seeds.length).toBe(targets.length); // what this member seeds is what it read
    await handover.stop();
  });

  it("counts and logs the targets left out once while they stay the same, not at each write", async () => {
    const bucket = memoryBucket();
    await bucket.write(KEY, overBudgetRecord(), 0);
    const trimmed: number[] = [];
    const engine = polledEngine();
    const handover = handoverOf("m2", bucket, () => [KEY], [], {
      targetKeys: ofKey([...busyTargets, BTC_OFF.id]),
      historyTrimmed: (count) => trimmed.push(count),
      historyCheckpointMs: 10_000, // the claimed points stay in the record (never due: the clock stands still)
    });
    handover.attach(seededRunner(engine, []));
    await settle(100);
    const revisions = [bucket.records.get(KEY)!.revision];
    for (const price of ["120", "100"]) {
      observe(engine, obs.off(pairPrice(price, NOW_MS), NOW_MS), rules, NOW_MS); // an alert checkpoint each
      handover.request();
      await settle(50);
      revisions.push(bucket.records.get(KEY)!.revision);
    }
    expect(new Set(revisions).size).toBe(3); // written three times, the same targets left out each time
    expect(trimmed.length).toBe(1);
    await handover.stop();
  });

  it("writes no history field when the alert state alone fills the budget", async () => {
    const bucket = memoryBucket();
    await bucket.write(KEY, overBudgetRecord(), 0);
    const trimmed: number[] = [];
    // a writer field over the budget stands in for an alert state that large
    const handover = handoverOf("m".repeat(RECORD_BUDGET_BYTES), bucket, () => [KEY], [], {
      targetKeys: ofKey(busyTargets),
      historyTrimmed: (count) => trimmed.push(count),
    });
    handover.attach(seededRunner(createMonitorState(), []));
    await settle(100);
    const record = JSON.parse(bucket.records.get(KEY)!.text) as Record<string, unknown>;
    expect(record.memberId).toHaveLength(RECORD_BUDGET_BYTES);
    expect("history" in record).toBe(false);
    expect(trimmed).toEqual([busyTargets.length]);
    await handover.stop();
  });
});

/** Forty targets of `KEY` with about 15 KiB of points each. */
const busyTargets = Array.from({ length: 40 }, (_, i) => `offchain:P${i}/USD`);

/** A record of `KEY` whose points take more than RECORD_BUDGET_BYTES (busyTargets'). */
function overBudgetRecord(): string {
  const history = Object.fromEntries(busyTargets.map((id, i) => [id, busyPoints(900 + i)]));
  return checkpointJson({ lastSeq: 3, engine: NO_ALERTS }, T0, { memberId: "m0", history });
}

/** Poll BTC/USD into `engine` once a second in (`fromMs`, `toMs`] at `price`, under `withRules`. */
function pollInto(
  engine: MonitorState,
  fromMs: number,
  toMs: number,
  price = "100",
  withRules = rules,
): void {
  for (let atMs = fromMs + 1_000; atMs <= toMs; atMs += 1_000)
    observe(engine, obs.off(pairPrice(price, atMs), atMs), withRules, atMs);
}

/** A bucket that logs each write: when, by whom, whether it carried points, and the revision it got (null: refused). */
function loggedBucket() {
  const bucket = memoryBucket();
  const writes: { atMs: number; memberId: string; points: boolean; revision: number | null }[] = [];
  const write = async (key: string, text: string, expected: number): Promise<number | null> => {
    const revision = await bucket.write(key, text, expected);
    const record = JSON.parse(text) as { memberId: string; history?: unknown };
    writes.push({
      atMs: Date.now(),
      memberId: record.memberId,
      points: record.history !== undefined,
      revision,
    });
    return revision;
  };
  return { ...bucket, write, writes };
}

describe("periodic checkpoints of a held key's points (virtual time)", () => {
  const INTERVAL_MS = 10_000;
  const periodic = { historyCheckpointMs: INTERVAL_MS, nowMs: () => Date.now() };
  const dueMs = nextHistoryDueMs(KEY, NOW_MS, INTERVAL_MS);
  beforeEach(() => vi.useFakeTimers({ now: NOW_MS }));
  afterEach(() => vi.useRealTimers());

  it("writes the points at the key's phase, then once an interval; after a kill -9 the next owner seeds them", async () => {
    const bucket = loggedBucket();
    const engine = polledEngine();
    const old = handoverOf("m1", bucket, () => [KEY], [], periodic);
    old.attach(seededRunner(engine, []));
    await vi.advanceTimersByTimeAsync(dueMs - 1 - NOW_MS);
    pollInto(engine, NOW_MS, dueMs - 1);
    expect(bucket.writes.map((w) => w.points)).toEqual([false]); // the claim only
    let polledToMs = dueMs - 1;
    for (let interval = 0; interval < 3; interval += 1) {
      await vi.advanceTimersByTimeAsync(INTERVAL_MS);
      pollInto(engine, polledToMs, polledToMs + INTERVAL_MS);
      polledToMs += INTERVAL_MS;
    }
    const periodicWrites = bucket.writes.filter((w) => w.points);
    expect(periodicWrites.length).toBe(3);
    // each within the pass (1 s) after its due time
    periodicWrites.forEach((w, i) => expect(w.atMs - (dueMs + i * INTERVAL_MS)).toBeLessThan(1_000));
    const lastWrittenTimes = recordedTimes(bucket);
    expect(lastWrittenTimes?.at(-1)).toBeLessThanOrEqual(periodicWrites.at(-1)!.atMs);

    vi.clearAllTimers(); // kill -9: the old member writes nothing more
    const seeds: [string, readonly PricePoint[]][] = [];
    const next = handoverOf("m2", bucket, () => [KEY], [], periodic);
    next.attach(seededRunner(createMonitorState(), seeds));
    await vi.advanceTimersByTimeAsync(50);
    expect(seeds.map(([id, points]) => [id, points.map((point) => point.atMs)])).toEqual([
      [BTC_OFF.id, lastWrittenTimes],
    ]);
  });

  it("writes nothing while the points are unchanged, and again once they change", async () => {
    const hourRules = [
      rule("price_change", { windowMs: 3_600_000, market: "offchain" }, { threshold: 0.05 }),
    ];
    const engine = createMonitorState();
    pollInto(engine, T0, NOW_MS, "100", hourRules);
    const bucket = loggedBucket();
    const handover = handoverOf("m1", bucket, () => [KEY], [], periodic);
    handover.attach(seededRunner(engine, []));
    await vi.advanceTimersByTimeAsync(INTERVAL_MS + 1_000);
    expect(bucket.writes.filter((w) => w.points).length).toBe(1);
    // unchanged points are not even read again (a token of each history tells), let alone encoded
    const reads = vi.spyOn(PriceHistory.prototype, "points");
    await vi.advanceTimersByTimeAsync(5 * INTERVAL_MS);
    expect(reads).not.toHaveBeenCalled();
    reads.mockRestore();
    expect(bucket.writes.filter((w) => w.points).length).toBe(1);
    pollInto(engine, Date.now() - 1_000, Date.now(), "100", hourRules);
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(bucket.writes.filter((w) => w.points).length).toBe(2);
  });

  it("writes again when a point in the middle was replaced, the points' count and ends the same", async () => {
    const hourRules = [
      rule("price_change", { windowMs: 3_600_000, market: "offchain" }, { threshold: 0.05 }),
    ];
    const engine = createMonitorState();
    pollInto(engine, T0, NOW_MS, "100", hourRules); // an hour's window keeps a point every 4 s of these
    const bucket = loggedBucket();
    const handover = handoverOf("m1", bucket, () => [KEY], [], periodic);
    handover.attach(seededRunner(engine, []));
    await vi.advanceTimersByTimeAsync(INTERVAL_MS + 1_000);
    const written = recordedTimes(bucket) ?? [];
    expect(written.length).toBeGreaterThanOrEqual(3);
    // a point 1 ms before the middle one (closer than the history keeps two apart) takes its place
    const middleMs = written[1]!;
    const replaced = { atMs: middleMs - 1, price: p("101") };
    observe(
      engine,
      { kind: "history", target: BTC_OFF, points: [replaced], source: "handover" },
      hourRules,
      Date.now(),
    );
    const now = exportHistories(engine, Date.now(), [BTC_OFF.id]).get(BTC_OFF.id) ?? [];
    expect(now.map((point) => point.atMs)).toEqual(
      written.map((atMs) => (atMs === middleMs ? atMs - 1 : atMs)),
    );
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(bucket.writes.filter((w) => w.points).length).toBe(2);
    expect(recordedTimes(bucket)).toEqual(now.map((point) => point.atMs));
  });

  it("an alert checkpoint between them keeps the last points written in the record", async () => {
    const bucket = loggedBucket();
    const engine = polledEngine();
    const handover = handoverOf("m1", bucket, () => [KEY], [], periodic);
    handover.attach(seededRunner(engine, []));
    pollInto(engine, NOW_MS, dueMs + 1_000);
    await vi.advanceTimersByTimeAsync(dueMs + 1_000 - NOW_MS);
    const written = recordedTimes(bucket);
    expect(written).not.toBeNull();
    observe(engine, obs.off(pairPrice("120", Date.now()), Date.now()), rules, Date.now()); // price_change fires
    handover.request();
    await vi.advanceTimersByTimeAsync(50);
    const record = JSON.parse(bucket.records.get(KEY)!.text) as { engine: { alerts: unknown[] } };
    expect(record.engine.alerts.length).toBe(1);
    expect(recordedTimes(bucket)).toEqual(written);
  });

  it("is fenced: no write without a valid lease, and a newer owner's record is never overwritten", async () => {
    const bucket = loggedBucket();
    const engine = polledEngine();
    // its view catches up with the newer owner right after its write is refused (else it would claim the key again)
    const ownedByOld = (): readonly string[] => (bucket.writes.some((w) => w.revision === null) ? [] : [KEY]);
    let leaseValid = true;
    const member = { ...owningMember(bucket, ownedByOld), leaseValid: () => leaseValid };
    const old = handoverOf("m1", bucket, ownedByOld, [], { ...periodic, member });
    old.attach(seededRunner(engine, []));
    await vi.advanceTimersByTimeAsync(50);
    leaseValid = false;
    pollInto(engine, NOW_MS, dueMs + 2_000);
    await vi.advanceTimersByTimeAsync(dueMs + 2_000 - NOW_MS);
    expect(bucket.writes.map((w) => w.memberId)).toEqual(["m1"]); // the claim only

    // a newer owner took the key while this member's view still says it owns it, through its next due time
    leaseValid = true;
    const newer = checkpointJson({ lastSeq: 9, engine: NO_ALERTS }, Date.now(), { memberId: "m3" });
    await bucket.write(KEY, newer, bucket.records.get(KEY)!.revision);
    pollInto(engine, dueMs + 2_000, dueMs + INTERVAL_MS + 2_000);
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(bucket.records.get(KEY)!.text).toBe(newer);
    // the periodic write (with points, the key still owned) lost its compare-and-set, and the key was let go
    expect(bucket.writes.slice(1)).toMatchObject([
      { memberId: "m3" },
      { memberId: "m1", points: true, revision: null },
    ]);
    expect(old.owns(KEY)).toBe(false);
  });

  it("keeps a key whose own write timed out after NATS applied it: the next write takes that revision", async () => {
    const bucket = failingBucket();
    const engine = polledEngine();
    const released: string[][] = [];
    const runner = {
      ...seededRunner(engine, []),
      release: (fps: readonly string[]) => released.push([...fps]),
    };
    const handover = handoverOf("m1", bucket, () => [KEY], [], periodic);
    handover.attach(runner);
    await vi.advanceTimersByTimeAsync(50);
    bucket.failNext.set(KEY, "applied"); // the alert checkpoint below is applied, its reply lost
    observe(engine, obs.off(pairPrice("120", Date.now()), Date.now()), rules, Date.now()); // price_change fires
    handover.request();
    await vi.advanceTimersByTimeAsync(50);
    const appliedRevision = bucket.records.get(KEY)!.revision;
    pollInto(engine, NOW_MS, dueMs, "120");
    await vi.advanceTimersByTimeAsync(dueMs + 1_000 - Date.now()); // the points due: written over the applied write
    expect(handover.owns(KEY)).toBe(true);
    expect(released).toEqual([]);
    expect(bucket.records.get(KEY)!.revision).toBeGreaterThan(appliedRevision);
    expect(recordedTimes(bucket)).not.toBeNull(); // the periodic points (the claim and the alert checkpoint had none)
    await handover.stop();
  });

  it("a write failing lets another key lost in the same pass go all the same", async () => {
    const OTHER = "pair:ETH/USD";
    const bucket = failingBucket();
    const handover = handoverOf("m1", bucket, () => [KEY, OTHER], [], periodic);
    handover.attach(seededRunner(polledEngine(), []));
    await vi.advanceTimersByTimeAsync(50);
    expect([handover.owns(KEY), handover.owns(OTHER)]).toEqual([true, true]);
    const newer = checkpointJson({ lastSeq: 9, engine: NO_ALERTS }, Date.now(), { memberId: "m3" });
    await bucket.write(OTHER, newer, bucket.records.get(OTHER)!.revision);
    bucket.failNext.set(KEY, "unapplied");
    await handover.stop(); // the last writes of both: KEY's fails, OTHER's compare-and-set is lost
    expect(bucket.records.get(OTHER)!.text).toBe(newer);
    expect([handover.owns(KEY), handover.owns(OTHER)]).toEqual([true, false]);
  });

  it("a due write failing is retried at the next pass, not an interval later", async () => {
    const bucket = failingBucket();
    const engine = polledEngine();
    const handover = handoverOf("m1", bucket, () => [KEY], [], periodic);
    handover.attach(seededRunner(engine, []));
    await vi.advanceTimersByTimeAsync(50);
    pollInto(engine, NOW_MS, dueMs - 1);
    await vi.advanceTimersByTimeAsync(dueMs - 1 - NOW_MS - 50);
    bucket.failNext.set(KEY, "unapplied");
    await vi.advanceTimersByTimeAsync(1_000); // the due pass: its write fails
    expect(recordedTimes(bucket)).toBeNull();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(recordedTimes(bucket)).not.toBeNull();
    await handover.stop();
  });

  it("writes no periodic points for a target whose longest window is shorter than lease + interval; a release does", async () => {
    const bucket = loggedBucket();
    const engine = polledEngine(); // a 10 s window
    let owned: readonly string[] = [KEY];
    const handover = handoverOf("m1", bucket, () => owned, [], { ...periodic, leaseMs: 3_000 });
    handover.attach(seededRunner(engine, []));
    pollInto(engine, NOW_MS, NOW_MS + 3 * INTERVAL_MS);
    await vi.advanceTimersByTimeAsync(3 * INTERVAL_MS);
    expect(bucket.writes.filter((w) => w.points)).toEqual([]);
    owned = [];
    handover.request();
    await vi.advanceTimersByTimeAsync(50);
    expect(bucket.writes.at(-1)).toMatchObject({ memberId: "m1", points: true });
  });
});

/** A logged bucket whose next write of a key fails: applied but its reply lost (a timeout), or not applied at all. */
function failingBucket() {
  const bucket = loggedBucket();
  const failNext = new Map<string, "applied" | "unapplied">();
  const write = async (key: string, text: string, expected: number): Promise<number | null> => {
    const failure = failNext.get(key);
    failNext.delete(key);
    if (failure === "unapplied") throw new Error("TIMEOUT");
    const revision = await bucket.write(key, text, expected);
    if (failure === "applied") throw new Error("TIMEOUT");
    return revision;
  };
  return { ...bucket, write, failNext };
}
