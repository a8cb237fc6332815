// The handover's shell with the log: a member adopting a key applies the transitions journaled after the key's
// checkpoint, and holds its own checkpoint back while its events still wait for the log.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { AlertBucket } from "../../src/cluster/alert-bucket.js";
import { createAlertHandover } from "../../src/cluster/alert-handover.js";
import { indexTargetKeys } from "../../src/cluster/target-keys.js";
import { NO_ALERTS } from "../../src/domain/alert-handover.js";
import type { AlertPayload } from "../../src/domain/events.js";
import {
  adoptAlertState,
  createMonitorState,
  exportAlertState,
  type MonitorState,
  type PersistedAlertState,
} from "../../src/domain/monitor.js";
import type { MonitorRunner } from "../../src/pipeline/monitor-runner.js";
import { checkpointJson, parseCheckpointJson } from "../../src/state/alert-checkpoint.js";
import { BTC_OFF, rule, timeline } from "../domain/helpers.js";
import { memoryBucket, owningMember } from "./handover-fakes.js";

const rules = [rule("upstream_error", {}, { threshold: 2 })];
const KEY = "pair:BTC/USD";
const targetKeys = indexTargetKeys([[BTC_OFF.id, KEY]]);

/** A runner recording what it adopted into its engine `engine` (only what the handover uses of a runner). */
function recordingRunner(engine: () => MonitorState, adopted: PersistedAlertState[]): MonitorRunner {
  const runner: Partial<MonitorRunner> = {
    adopt: (persisted) => {
      adopted.push(persisted);
      adoptAlertState(engine(), persisted);
    },
    release: () => undefined,
    state: engine,
  };
  // the handover uses only adopt, release and state
  return runner as MonitorRunner;
}

const settle = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The alerts of `KEY`'s record in `bucket`, as `rule:status`. */
function recorded(bucket: ReturnType<typeof memoryBucket>): string[] {
  const text = bucket.records.get(KEY)?.text;
  if (text === undefined) return [];
  return parseCheckpointJson(text).engine.alerts.map((a) => `${a.rule}:${a.status}`);
}

/** A handover of `KEY` over `bucket`, the log holding `journal` and its events waiting while `unpublished()`. */
function handoverOver(
  bucket: AlertBucket,
  journal: readonly { readonly seq: number; readonly alert: AlertPayload }[],
  unpublished: () => boolean,
  readThrough: () => Promise<boolean> = () => Promise.resolve(true),
  readThroughPatienceMs = 60_000,
) {
  return createAlertHandover({
    member: owningMember(bucket, () => [KEY]),
    memberId: "m2",
    targetKeys: () => targetKeys,
    keyOfLabels: () => () => undefined,
    lastSeq: () => 5,
    journaledAfter: (seq) => journal.filter((e) => e.seq > seq).map((e) => e.alert),
    unpublished,
    readThrough,
    readThroughPatienceMs,
    nowMs: Date.now,
    logger: pino({ level: "silent" }),
    restrict: () => undefined,
    historyRejected: () => undefined,
    historyCheckpointMs: 0,
    historyTrimmed: () => undefined,
    leaseMs: 3_000,
  });
}

/** upstream_error firing on BTC/USD: the engine, and the transition it published. */
function fired() {
  const { state, transitions } = timeline(rules, [
    [0, "fail"],
    [1000, "fail"],
  ]);
  expect(transitions.map((a) => a.reason)).toEqual(["first"]);
  return { state, transitions };
}

describe("the alert handover with the cluster's log", () => {
  it("adopts a firing alert the log has but the checkpoint missed, and writes it as its own", async () => {
    const bucket = memoryBucket();
    // the old owner checkpointed at seq 4 (nothing firing), then published the firing at seq 5 and died
    await bucket.write(KEY, checkpointJson({ lastSeq: 4, engine: NO_ALERTS }, 0), 0);
    const journal = fired().transitions.map((alert) => ({ seq: 5, alert }));
    const adopted: PersistedAlertState[] = [];
    const handover = handoverOver(bucket, journal, () => false);
    const engine = createMonitorState();
    handover.attach(recordingRunner(() => engine, adopted));
    await settle(50);
    await handover.stop();
    expect(adopted.flatMap((s) => s.alerts.map((a) => `${a.rule}:${a.status}`))).toEqual([
      "upstream_error:firing",
    ]);
    expect(recorded(bucket)).toEqual(["upstream_error:firing"]);
  });

  it("adopts nothing until it has read the log to its end: a firing still unread is not lost", async () => {
    const bucket = memoryBucket();
    await bucket.write(KEY, checkpointJson({ lastSeq: 4, engine: NO_ALERTS }, 0), 0);
    // the old owner's firing is seq 5 of the log; this member's consumer has not read it yet
    const journal: { seq: number; alert: AlertPayload }[] = [];
    let read = false;
    const adopted: PersistedAlertState[] = [];
    const handover = handoverOver(
      bucket,
      journal,
      () => false,
      () => Promise.resolve(read),
    );
    const engine = createMonitorState();
    handover.attach(recordingRunner(() => engine, adopted));
    await settle(50);
    expect(adopted).toEqual([]);
    expect(handover.owns(KEY)).toBe(false);
    journal.push(...fired().transitions.map((alert) => ({ seq: 5, alert })));
    read = true;
    await settle(1_200);
    await handover.stop();
    expect(adopted.flatMap((s) => s.alerts.map((a) => `${a.rule}:${a.status}`))).toEqual([
      "upstream_error:firing",
    ]);
  });

  it("adopts anyway once the log could not be read to its end for the whole patience (no key left unpolled)", async () => {
    const bucket = memoryBucket();
    const adopted: PersistedAlertState[] = [];
    const handover = handoverOver(
      bucket,
      [],
      () => false,
      () => Promise.resolve(false),
      1_500,
    );
    const engine = createMonitorState();
    handover.attach(recordingRunner(() => engine, adopted));
    await settle(1_200);
    expect(handover.owns(KEY)).toBe(false);
    await settle(1_300);
    expect(handover.owns(KEY)).toBe(true);
    await handover.stop();
    expect(adopted).toHaveLength(1);
  });

  it("writes no checkpoint ahead of the log: a transition waits until its event was taken", async () => {
    const bucket = memoryBucket();
    let engine = createMonitorState();
    let unpublished = false;
    const handover = handoverOver(bucket, [], () => unpublished);
    handover.attach(recordingRunner(() => engine, []));
    await settle(50);
    expect(recorded(bucket)).toEqual([]);
    // the engine fires; its event is still queued for the log: the checkpoint keeps the previous state
    engine = fired().state;
    unpublished = true;
    handover.request();
    await settle(300);
    expect(recorded(bucket)).toEqual([]);
    // the log took it: the next pass (retried within 100 ms) writes the firing alert
    unpublished = false;
    await settle(300);
    await handover.stop();
    expect(recorded(bucket)).toEqual(["upstream_error:firing"]);
    expect(exportAlertState(engine).alerts).toHaveLength(1);
  });

  it("rewrites a held key whose last alert resolved with no alerts: a new owner does not restore it", async () => {
    const bucket = memoryBucket();
    const firing = fired();
    let engine = firing.state;
    const handover = handoverOver(bucket, [], () => false);
    handover.attach(recordingRunner(() => engine, []));
    await settle(50);
    expect(recorded(bucket)).toEqual(["upstream_error:firing"]);
    // the target recovers: the key's one alert resolves, the engine holds none of it any more
    const resolved = timeline(rules, [[2_000, 5]], firing.state);
    expect(resolved.transitions.map((a) => a.reason)).toEqual(["resolved"]);
    engine = resolved.state;
    handover.request();
    await settle(50);
    expect(recorded(bucket)).toEqual([]);
    expect(bucket.records.get(KEY)?.text).toContain('"alerts":[]');
    // this member is killed (no last write); the next owner adopts what the record says: nothing firing
    const adopted: PersistedAlertState[] = [];
    const next = handoverOver(bucket, [], () => false);
    const nextEngine = createMonitorState();
    next.attach(recordingRunner(() => nextEngine, adopted));
    await settle(50);
    await next.stop();
    await handover.stop(); // (its last write loses to the new owner's claim)
    expect(adopted.map((s) => s.alerts)).toEqual([[]]);
  });
});
