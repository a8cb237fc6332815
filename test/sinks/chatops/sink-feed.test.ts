// Feeding a sink: a transition a silence mutes is skipped (and counted), live and when catching up from the journal.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import type { AlertSinkConfig, SinkConfig } from "../../../src/config/types.js";
import type { AlertPayload } from "../../../src/domain/events.js";
import { createEventHub } from "../../../src/pipeline/event-hub.js";
import { createChatOpsSinks, type ChatOpsSinks } from "../../../src/sinks/chatops/index.js";
import { dispatchTo } from "../../../src/sinks/chatops/sink-feed.js";
import type { SinkWorker } from "../../../src/sinks/chatops/sink-worker.js";
import { createJournal } from "../../../src/state/journal.js";
import {
  captureLogger,
  makeAlert,
  makeEvent,
  metricValue,
  nthAlert,
  resolvedOf,
  sinkOf,
  startReceiver,
  testMetrics,
  type Receiver,
} from "./helpers.js";
import { waitFor } from "../../wait-for.js";

/** What dispatchTo asked of a worker, in order: `enqueue 7`, `skip 7`, `forget <fingerprint>`. */
function recordingWorker(): SinkWorker & { readonly calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    highWater: 0,
    enqueue: (event) => void calls.push(`enqueue ${event.seq}`),
    skip: (seq) => void calls.push(`skip ${seq}`),
    forget: (fingerprint) => void calls.push(`forget ${fingerprint}`),
    start: () => undefined,
    stop: () => Promise.resolve(),
    status: () => {
      throw new Error("not used by dispatchTo");
    },
  };
}

describe("dispatchTo", () => {
  const all = sinkOf("webhook", "http://127.0.0.1:9/hook", { name: "hook" });
  const quietResolves = { ...all, sendResolved: false };
  const otherRules = { ...all, rules: ["stale_price"] };
  const firing = makeAlert();
  const muted = { ...firing, silencedBy: ["s1"] };
  const fp = firing.fingerprint;
  const grouping = { ...all, groupBy: [] };
  const adopted: AlertPayload = { ...firing, reason: "repeat", causedBy: "fp-parent" };
  it.each<[string, AlertSinkConfig, AlertPayload, readonly string[], number]>([
    ["a routed firing", all, firing, ["enqueue 7"], 0],
    ["a routed firing a silence mutes: skipped and counted", all, muted, ["skip 7"], 1],
    ["an empty silencedBy mutes nothing", all, { ...firing, silencedBy: [] }, ["enqueue 7"], 0],
    ["a routed resolve", all, resolvedOf(firing), ["enqueue 7"], 0],
    ["a routed resolve a silence mutes: skipped and counted", all, resolvedOf(muted), ["skip 7"], 1],
    ["a muted alert the sink does not route: skipped, not counted", otherRules, muted, ["skip 7"], 0],
    [
      "a resolve with sendResolved off: skipped and forgotten",
      quietResolves,
      resolvedOf(firing),
      ["skip 7", `forget ${fp}`],
      0,
    ],
    [
      "a child's adoption, grouping sink: taken in (its group leaves it out), counted",
      grouping,
      adopted,
      ["enqueue 7"],
      1,
    ],
    ["a child's adoption, grouping off: skipped, counted", all, adopted, ["skip 7"], 1],
    [
      "a child's first firing, grouping sink: skipped",
      grouping,
      { ...adopted, reason: "first" },
      ["skip 7"],
      1,
    ],
    [
      "a muted resolve with sendResolved off: the same",
      quietResolves,
      resolvedOf(muted),
      ["skip 7", `forget ${fp}`],
      0,
    ],
  ])("%s", async (_name, sink, alert, calls, silenced) => {
    const worker = recordingWorker();
    const metrics = testMetrics();
    dispatchTo(sink, worker, makeEvent(7, alert), metrics);
    expect(worker.calls).toEqual(calls);
    expect(await metricValue(metrics.sinkSilenced, { sink: "hook" })).toBe(silenced);
  });
});

describe("silenced alerts and chat-ops sinks", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A real hub whose silences are `muted` (fingerprint → ids), and sinks built over it on a temp state dir. */
  async function setup() {
    const rx = await startReceiver();
    const stateDir = await mkdtemp(join(tmpdir(), "pm-silenced-"));
    const dispatcher = new Agent({ keepAliveTimeout: 10, keepAliveMaxTimeout: 10 });
    const muted = new Map<string, readonly string[]>();
    const hub = createEventHub({
      journal: createJournal(100),
      nowMs: Date.now,
      version: "test",
      silencing: (alert) => muted.get(alert.fingerprint) ?? [],
    });
    const metrics = testMetrics();
    const log = captureLogger();
    cleanups.push(async () => {
      await dispatcher.close();
      await rx.close();
      await rm(stateDir, { recursive: true, force: true });
    });
    const build = (sinks: readonly SinkConfig[]): ChatOpsSinks => {
      const chatops = createChatOpsSinks({
        sinks,
        source: hub,
        stateDir,
        dispatcher,
        metrics,
        logger: log.logger,
        raise: (alert) => hub.publishAlert(alert),
        nowMs: Date.now,
        random: () => 0.5,
      });
      cleanups.push(() => chatops.stop(0));
      return chatops;
    };
    return { rx, hub, muted, metrics, log, build };
  }

  const delivered = (rx: Receiver): string[] =>
    rx.requests.map((r) => {
      const { seq, alert } = JSON.parse(r.body) as { seq: number; alert: AlertPayload };
      return `${seq} ${alert.labels["pair"]} ${alert.status}`;
    });

  it("are not delivered live, and each is counted", async () => {
    const { rx, hub, muted, metrics, build } = await setup();
    const chatops = build([sinkOf("webhook", `${rx.url}/hook`, { name: "hook" })]);
    await chatops.start();
    const [a1, a2, a3] = [nthAlert(1), nthAlert(2), nthAlert(3)];
    muted.set(a2.fingerprint, ["s1"]);
    hub.publishAlert(a1); // 1
    hub.publishAlert(a2); // 2: muted
    hub.publishAlert(resolvedOf(a2)); // 3: never notified, so muted
    hub.publishAlert(a3); // 4
    await waitFor(() => expect(delivered(rx)).toEqual(["1 T1/USD firing", "4 T3/USD firing"]));
    expect(await metricValue(metrics.sinkSilenced, { sink: "hook" })).toBe(2);
  });

  it("are not delivered by the catch-up after a restart, nor counted twice", async () => {
    const { rx, hub, muted, metrics, log, build } = await setup();
    const sinks = [sinkOf("webhook", `${rx.url}/hook`, { name: "hook" })];
    const first = build(sinks);
    await first.start();
    const [a1, a2, a3, a4] = [nthAlert(1), nthAlert(2), nthAlert(3), nthAlert(4)];
    hub.publishAlert(a1); // 1
    await waitFor(() => expect(delivered(rx)).toEqual(["1 T1/USD firing"]));
    await first.stop(1_000);

    // journaled, and the daemon died before any outbox saw them
    muted.set(a2.fingerprint, ["s1"]);
    muted.set(a1.fingerprint, ["s1"]);
    hub.publishAlert(a2); // 2: muted
    hub.publishAlert({ ...a1, reason: "repeat" }); // 3: muted re-announcement of a notified alert
    hub.publishAlert(a3); // 4
    hub.publishAlert(resolvedOf(a2)); // 5: muted
    hub.publishAlert(resolvedOf(a1)); // 6: a1 was notified: heard

    const second = build(sinks);
    await second.start();
    await waitFor(() =>
      expect(delivered(rx)).toEqual(["1 T1/USD firing", "4 T3/USD firing", "6 T1/USD resolved"]),
    );
    expect(await metricValue(metrics.sinkSilenced, { sink: "hook" })).toBe(3);
    const requeued = log.lines.find((l) => l["msg"] === "re-queued journaled alerts missing from the outbox");
    expect(requeued).toMatchObject({ sink: "hook", replayed: 2 });
    await second.stop(1_000);

    const third = build(sinks); // nothing missing: nothing replayed, nothing counted again
    await third.start();
    hub.publishAlert(a4); // 7
    await waitFor(() => expect(delivered(rx)).toHaveLength(4));
    expect(delivered(rx)[3]).toBe("7 T4/USD firing");
    expect(await metricValue(metrics.sinkSilenced, { sink: "hook" })).toBe(3);
  });
});
