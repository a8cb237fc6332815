// After a crash between the journal write and the outbox write, a sink catches up from the journal: exactly once.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { createEventHub } from "../../../src/pipeline/event-hub.js";
import { createJournal } from "../../../src/state/journal.js";
import { createChatOpsSinks, type ChatOpsSinks } from "../../../src/sinks/chatops/index.js";
import type { SinkConfig } from "../../../src/config/types.js";
import { captureLogger, nthAlert, sinkOf, startReceiver, testMetrics, type Receiver } from "./helpers.js";
import { waitFor } from "../../wait-for.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(journalCapacity = 100) {
  const rx = await startReceiver();
  const stateDir = await mkdtemp(join(tmpdir(), "pm-catchup-"));
  const dispatcher = new Agent({ keepAliveTimeout: 10, keepAliveMaxTimeout: 10 });
  const hub = createEventHub({ journal: createJournal(journalCapacity), nowMs: Date.now, version: "test" });
  cleanups.push(async () => {
    await dispatcher.close();
    await rx.close();
    await rm(stateDir, { recursive: true, force: true });
  });
  const log = captureLogger();
  const build = (sinks: readonly SinkConfig[]): ChatOpsSinks => {
    const chatops = createChatOpsSinks({
      sinks,
      source: hub,
      stateDir,
      dispatcher,
      metrics: testMetrics(),
      logger: log.logger,
      raise: (alert) => hub.publishAlert(alert),
      nowMs: Date.now,
      random: () => 0.5,
    });
    cleanups.push(() => chatops.stop(0));
    return chatops;
  };
  return { rx, hub, build, log };
}

const seqsAt = (rx: Receiver, path: string): number[] =>
  rx.requests.filter((r) => r.url === path).map((r) => (JSON.parse(r.body) as { seq: number }).seq);

describe("chat-ops catch-up from the journal", () => {
  it("delivers journaled alerts missing from the outbox once, and never re-sends delivered ones", async () => {
    const { rx, hub, build, log } = await setup();
    const sinks = [sinkOf("webhook", `${rx.url}/hook`, { name: "hook", rules: ["price_change"] })];
    const first = build(sinks);
    await first.start();
    hub.publishAlert(nthAlert(1, { rule: "price_change" })); // seq 1
    await waitFor(() => expect(seqsAt(rx, "/hook")).toEqual([1]));
    await first.stop(1_000);

    // the daemon "died" after journaling these and before any outbox saw them
    hub.publishAlert(nthAlert(2, { rule: "price_change" })); // seq 2: routed to the sink
    hub.publishAlert(nthAlert(3, { rule: "stale_price" })); // seq 3: filtered out by the sink's rules

    const second = build([...sinks, sinkOf("webhook", `${rx.url}/fresh`, { name: "fresh" })]);
    await second.start();
    hub.publishAlert(nthAlert(4, { rule: "price_change" })); // seq 4: live after the restart
    await waitFor(() => expect(seqsAt(rx, "/hook")).toEqual([1, 2, 4]));
    await waitFor(() => expect(seqsAt(rx, "/fresh")).toEqual([4])); // a new sink gets no history
    expect(log.lines.some((l) => l["msg"] === "re-queued journaled alerts missing from the outbox")).toBe(
      true,
    );

    await second.stop(1_000);
    const third = build(sinks);
    await third.start(); // nothing missing: nothing replayed
    hub.publishAlert(nthAlert(5, { rule: "price_change" }));
    await waitFor(() => expect(seqsAt(rx, "/hook")).toEqual([1, 2, 4, 5]));
  });

  it("reports alerts the journal no longer holds, and delivers those it does", async () => {
    const { rx, hub, build, log } = await setup(2);
    const sinks = [sinkOf("webhook", `${rx.url}/hook`, { name: "hook" })];
    const first = build(sinks);
    await first.start();
    hub.publishAlert(nthAlert(1)); // seq 1, delivered
    await waitFor(() => expect(seqsAt(rx, "/hook")).toEqual([1]));
    await first.stop(1_000);
    for (let i = 2; i <= 4; i++) hub.publishAlert(nthAlert(i)); // missed; the 2-event journal keeps 3 and 4

    const second = build(sinks);
    await second.start();
    await waitFor(() => expect(seqsAt(rx, "/hook")).toEqual([1, 3, 4]));
    const gap = log.lines.find((l) => l["msg"] === "journal no longer holds alerts this sink missed");
    expect(gap).toMatchObject({ from: 2, to: 2 });
  });

  it("never replays a previous run's watchdog: it says nothing about this run", async () => {
    const { rx, hub, build } = await setup();
    const sinks = [
      sinkOf("webhook", `${rx.url}/hook`, { name: "hook", rules: ["watchdog", "price_change"] }),
    ];
    const first = build(sinks);
    await first.start();
    hub.publishAlert(nthAlert(1)); // seq 1, delivered
    await waitFor(() => expect(seqsAt(rx, "/hook")).toEqual([1]));
    await first.stop(1_000);
    hub.publishAlert(nthAlert(2, { rule: "watchdog", fingerprint: "wd", labels: {} })); // journaled, then kill -9
    hub.publishAlert(nthAlert(3)); // seq 3

    const second = build(sinks);
    await second.start();
    await waitFor(() => expect(seqsAt(rx, "/hook")).toEqual([1, 3]));
    hub.publishAlert(nthAlert(4, { rule: "watchdog", fingerprint: "wd", labels: {} })); // this run's, live
    await waitFor(() => expect(seqsAt(rx, "/hook")).toEqual([1, 3, 4]));
  });
});
