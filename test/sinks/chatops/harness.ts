// A running createChatOpsSinks on a manual clock, a temp state dir and a loopback receiver.
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent } from "undici";
import { expect } from "vitest";
import type { SinkConfig } from "../../../src/config/types.js";
import type { AlertPayload } from "../../../src/domain/events.js";
import type { Metrics } from "../../../src/metrics.js";
import { createChatOpsSinks, type ChatOpsSinks } from "../../../src/sinks/chatops/index.js";
import {
  captureLogger,
  createManualClock,
  createTestSource,
  makeEvent,
  startReceiver,
  testMetrics,
  type ManualClock,
  type Receiver,
} from "./helpers.js";
import { waitFor } from "../../wait-for.js";

export interface Harness {
  readonly clock: ManualClock;
  readonly rx: Receiver;
  readonly stateDir: string;
  readonly metrics: Metrics;
  readonly log: ReturnType<typeof captureLogger>;
  readonly raised: AlertPayload[];
  chatops: ChatOpsSinks;
  publish(alert: AlertPayload): void;
  /** Wait until `sink` has finished `n` delivery attempts (outcome classified, backoff computed). */
  waitForAttempts(n: number, sink?: string): Promise<void>;
  /** Wait until the outbox of `sink` holds the event `seq` on disk (what the delivery loop decides on). */
  waitForDurable(sink: string, seq: number): Promise<void>;
  /** A fresh instance on the same state dir (a restart). */
  restart(sinks: readonly SinkConfig[]): Promise<void>;
  dispose(): Promise<void>;
}

/** Start the sinks built by `makeSinks(receiverUrl)`; `raise` republishes sink_error alerts on the bus. */
export async function startHarness(
  makeSinks: (url: string) => readonly SinkConfig[],
  options: {
    readonly active?: AlertPayload[];
    readonly stateDir?: string;
    readonly isHealthy?: () => boolean;
  } = {},
): Promise<Harness> {
  const rx = await startReceiver();
  const clock = createManualClock();
  const stateDir = options.stateDir ?? (await mkdtemp(join(tmpdir(), "pm-chatops-")));
  const metrics = testMetrics();
  const log = captureLogger();
  const raised: AlertPayload[] = [];
  const dispatcher = new Agent({ keepAliveTimeout: 10, keepAliveMaxTimeout: 10 });
  let source = createTestSource(options.active ?? []);
  let seq = 0;
  const publish = (alert: AlertPayload): void => source.publish(makeEvent(++seq, alert));
  const build = (sinks: readonly SinkConfig[]): ChatOpsSinks =>
    createChatOpsSinks({
      sinks,
      source,
      stateDir,
      dispatcher,
      metrics,
      logger: log.logger,
      raise: (alert) => {
        raised.push(alert);
        publish(alert);
      },
      nowMs: clock.nowMs,
      random: () => 0.5,
      setTimer: clock.setTimer,
      clearTimer: clock.clearTimer,
      policy: { baseDelayMs: 1_000, maxDelayMs: 60_000 },
      ...(options.isHealthy === undefined ? {} : { isHealthy: options.isHealthy }),
    });
  const harness: Harness = {
    clock,
    rx,
    stateDir,
    metrics,
    log,
    raised,
    chatops: build(makeSinks(rx.url)),
    publish,
    waitForAttempts: (n, sink) =>
      waitFor(async () => {
        const { values } = await metrics.sinkDeliveries.get();
        const total = values
          .filter((v) => sink === undefined || v.labels.sink === sink)
          .reduce((a, v) => a + v.value, 0);
        expect(total).toBeGreaterThanOrEqual(n);
      }),
    waitForDurable: (sink, seq) =>
      waitFor(() => {
        const file = join(stateDir, "outbox", `${sink}.jsonl`);
        expect(existsSync(file) ? readFileSync(file, "utf8") : "").toContain(`"seq":${seq},`);
      }),
    async restart(sinks) {
      source = createTestSource(options.active ?? []);
      harness.chatops = build(sinks);
      await harness.chatops.start();
    },
    async dispose() {
      await harness.chatops.stop(0);
      await dispatcher.close();
      await rx.close();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
  await harness.chatops.start();
  return harness;
}
