// Re-subscribing with `since` on one connection: every matching event not yet sent, exactly once, in order (issue 15 §3).
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { Severity } from "../../../src/domain/events.js";
import { MAX_SENT_RANGES } from "../../../src/sinks/ws/resume.js";
import {
  PAIRS,
  RULES,
  alert,
  connect,
  metricValue,
  startHarness,
  type Frame,
  type Harness,
  type TestClient,
} from "./harness.js";

const SEVERITY_ORDER: readonly Severity[] = ["info", "warning", "critical"];
const JOURNAL_SIZE = 30;

/** What the reference model knows of one published event. */
interface ModelEvent {
  readonly seq: number;
  readonly kind: "alert" | "lifecycle";
  readonly pair: string;
  readonly rule: string;
  readonly severity: Severity;
}

/** The reference filter: plain sets, `null` = all. */
interface ModelFilter {
  readonly channels: ReadonlySet<string>;
  readonly pairs: ReadonlySet<string> | null;
  readonly rules: ReadonlySet<string> | null;
  readonly minSeverity: Severity;
}

const modelMatches = (filter: ModelFilter, event: ModelEvent): boolean =>
  event.kind === "lifecycle"
    ? filter.channels.has("lifecycle")
    : filter.channels.has("alerts") &&
      SEVERITY_ORDER.indexOf(event.severity) >= SEVERITY_ORDER.indexOf(filter.minSeverity) &&
      (filter.pairs === null || filter.pairs.has(event.pair)) &&
      (filter.rules === null || filter.rules.has(event.rule));

type Op =
  | {
      readonly op: "publish";
      readonly events: readonly Omit<ModelEvent, "seq">[];
    }
  | {
      readonly op: "subscribe";
      readonly channels: readonly string[];
      readonly pairs?: readonly string[];
      readonly rules?: readonly string[];
      readonly minSeverity?: Severity;
      /** Fraction of the last seq to resume from (null = no since). */
      readonly sinceAt: number | null;
    }
  | {
      readonly op: "unsubscribe";
      readonly channels: readonly string[];
      readonly pairs?: readonly string[];
    };

const someOf = (names: readonly string[]): fc.Arbitrary<string[]> =>
  fc.subarray([...names], { minLength: 0 });

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("publish" as const),
      events: fc.array(
        fc.record({
          kind: fc.constantFrom("alert" as const, "alert" as const, "alert" as const, "lifecycle" as const),
          pair: fc.constantFrom(...PAIRS),
          rule: fc.constantFrom(...RULES),
          severity: fc.constantFrom(...SEVERITY_ORDER),
        }),
        { minLength: 1, maxLength: 6 },
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record(
      {
        op: fc.constant("subscribe" as const),
        channels: someOf(["alerts", "lifecycle"]),
        pairs: someOf(PAIRS),
        rules: someOf(RULES),
        minSeverity: fc.constantFrom(...SEVERITY_ORDER),
        sinceAt: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null }),
      },
      { requiredKeys: ["op", "channels", "sinceAt"] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record(
      {
        op: fc.constant("unsubscribe" as const),
        channels: someOf(["alerts", "lifecycle"]),
        pairs: someOf(PAIRS),
      },
      { requiredKeys: ["op", "channels"] },
    ),
  },
);

/** The reference model of one connection: its filter and the set of seqs it was sent (unbounded, obviously right). */
class Model {
  filter: ModelFilter = { channels: new Set(), pairs: null, rules: null, minSeverity: "info" };
  readonly sent = new Set<number>();
  readonly events: ModelEvent[] = [];

  /** The frames (as short strings) the server must send for `op`, updating the model. */
  expect(op: Op, since: number | null): string[] {
    switch (op.op) {
      case "publish": {
        const out: string[] = [];
        for (const event of op.events) {
          const numbered = { ...event, seq: this.events.length + 1 };
          this.events.push(numbered);
          if (modelMatches(this.filter, numbered)) out.push(this.send(numbered));
        }
        return out;
      }
      case "subscribe": {
        this.filter = {
          channels: new Set([...this.filter.channels, ...op.channels]),
          pairs:
            op.pairs === undefined ? this.filter.pairs : op.pairs.length === 0 ? null : new Set(op.pairs),
          rules:
            op.rules === undefined ? this.filter.rules : op.rules.length === 0 ? null : new Set(op.rules),
          minSeverity: op.minSeverity ?? this.filter.minSeverity,
        };
        const out = ["subscribed"];
        if (since === null) return out;
        const oldest = Math.max(1, this.events.length - JOURNAL_SIZE + 1);
        if (since + 1 < oldest) out.push(`gap:${since + 1}-${oldest - 1}`);
        for (const event of this.events) {
          if (event.seq <= since || event.seq < oldest || this.sent.has(event.seq)) continue;
          if (modelMatches(this.filter, event)) out.push(this.send(event));
        }
        return out;
      }
      case "unsubscribe": {
        const channels = new Set(this.filter.channels);
        for (const channel of op.channels) channels.delete(channel);
        let pairs = this.filter.pairs;
        if (op.pairs !== undefined && op.pairs.length > 0) {
          if (pairs === null) return ["error"];
          pairs = new Set([...pairs].filter((pair) => !op.pairs!.includes(pair)));
          if (pairs.size === 0) return ["error"];
        }
        this.filter = { ...this.filter, channels, pairs };
        return ["unsubscribed"];
      }
    }
  }

  private send(event: ModelEvent): string {
    expect(this.sent.has(event.seq), `seq ${event.seq} would be sent twice`).toBe(false);
    this.sent.add(event.seq);
    return `${event.kind}:${event.seq}`;
  }
}

/** A frame in the short form the model speaks. */
function shortFrame(frame: Frame): string | null {
  switch (frame.type) {
    case "alert":
    case "lifecycle":
      return `${frame.type}:${String(frame["seq"])}`;
    case "gap":
      return `gap:${String(frame["from"])}-${String(frame["to"])}`;
    case "subscribed":
    case "unsubscribed":
    case "error":
      return frame.type;
    default:
      return null; // pong barriers, heartbeats
  }
}

/** Every frame the server sent since the last barrier, up to a fresh ping's pong. */
async function framesUntilBarrier(client: TestClient, barrier: number): Promise<string[]> {
  const start = client.frames.length;
  await client.request({ op: "ping", id: `barrier-${barrier}` });
  return client.frames
    .slice(start)
    .filter((frame) => frame["id"] !== `barrier-${barrier}`)
    .map(shortFrame)
    .filter((text): text is string => text !== null);
}

/** Send one op to the real server (publish through the hub); returns the `since` it used. */
function perform(harness: Harness, client: TestClient, op: Op, index: number): number | null {
  const lastSeq = harness.hub.lastSeq();
  switch (op.op) {
    case "publish":
      for (const event of op.events) {
        if (event.kind === "lifecycle") harness.hub.publishLifecycle("config_reloaded");
        else
          harness.hub.publishAlert(
            alert({ pair: event.pair, rule: event.rule as never, severity: event.severity }),
          );
      }
      return null;
    case "subscribe": {
      const since = op.sinceAt === null ? null : Math.floor(op.sinceAt * lastSeq);
      const { op: name, sinceAt: _unused, ...rest } = op;
      client.send({ op: name, id: `op-${index}`, ...rest, ...(since === null ? {} : { since }) });
      return since;
    }
    case "unsubscribe":
      client.send({ ...op, id: `op-${index}` });
      return null;
  }
}

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Run ops on one connection, checking each op's frames against the model. */
async function runAgainstModel(ops: readonly Op[]): Promise<void> {
  harness = await startHarness({ journalSize: JOURNAL_SIZE, messagesPerSecond: 100_000 });
  const client = await connect(harness.url);
  const model = new Model();
  try {
    for (const [index, op] of ops.entries()) {
      const since = perform(harness, client, op, index);
      const got = await framesUntilBarrier(client, index);
      expect(got, `op ${index} ${JSON.stringify(op)} since ${since}`).toEqual(model.expect(op, since));
    }
  } finally {
    client.close();
    await harness.close();
    harness = undefined;
  }
}

const publish = (...events: [pair: string, severity: Severity][]): Op => ({
  op: "publish",
  events: events.map(([pair, severity]) => ({ kind: "alert", pair, rule: "price_change", severity })),
});
const ALL_PAIRS = PAIRS.map((pair): [string, Severity] => [pair, "warning"]);

describe("re-subscribing with since on one connection", () => {
  it.each<[string, Op[]]>([
    [
      "subscribe, unsubscribe, subscribe again, then since: the events of the off period come",
      [
        { op: "subscribe", channels: ["alerts"], sinceAt: null },
        publish(...ALL_PAIRS),
        { op: "unsubscribe", channels: ["alerts"] },
        publish(...ALL_PAIRS, ...ALL_PAIRS),
        { op: "subscribe", channels: ["alerts"], sinceAt: null },
        publish(...ALL_PAIRS),
        { op: "subscribe", channels: ["alerts"], sinceAt: 0 },
      ],
    ],
    [
      "BTC, then all pairs with since: no duplicates",
      [
        { op: "subscribe", channels: ["alerts"], pairs: ["BTC/USD"], sinceAt: null },
        publish(...ALL_PAIRS, ...ALL_PAIRS),
        { op: "unsubscribe", channels: ["alerts"] },
        publish(...ALL_PAIRS),
        { op: "subscribe", channels: ["alerts"], pairs: [], sinceAt: 0 },
      ],
    ],
    [
      "BTC, then ETH, then all with since: no duplicates",
      [
        { op: "subscribe", channels: ["alerts"], pairs: ["BTC/USD"], sinceAt: null },
        publish(...ALL_PAIRS),
        { op: "subscribe", channels: ["alerts"], pairs: ["ETH/USD"], sinceAt: null },
        publish(...ALL_PAIRS),
        { op: "subscribe", channels: ["alerts"], pairs: [], sinceAt: 0 },
      ],
    ],
    [
      "minSeverity toggled, then since",
      [
        { op: "subscribe", channels: ["alerts"], minSeverity: "critical", sinceAt: null },
        publish(["BTC/USD", "info"], ["BTC/USD", "critical"], ["ETH/USD", "warning"]),
        { op: "subscribe", channels: ["alerts"], minSeverity: "info", sinceAt: null },
        publish(["BTC/USD", "info"], ["BTC/USD", "critical"], ["ETH/USD", "warning"]),
        { op: "subscribe", channels: ["alerts"], minSeverity: "critical", sinceAt: null },
        publish(["BTC/USD", "info"], ["BTC/USD", "critical"]),
        { op: "subscribe", channels: ["alerts"], minSeverity: "info", sinceAt: 0 },
      ],
    ],
    [
      "a since older than the journal: a gap, then only what was not sent",
      [
        { op: "subscribe", channels: ["alerts"], pairs: ["SOL/USD"], sinceAt: null },
        publish(...Array.from({ length: 12 }, () => ALL_PAIRS).flat()),
        { op: "subscribe", channels: ["alerts"], pairs: [], sinceAt: 0 },
      ],
    ],
  ])("%s", async (_name, ops) => {
    await runAgainstModel(ops);
  });

  it("refuses a since older than its bounded record can answer exactly, and counts what it forgot", async () => {
    harness = await startHarness({ messagesPerSecond: 100_000 });
    const client = await connect(harness.url);
    for (let i = 0; i < MAX_SENT_RANGES + 10; i++) {
      harness.hub.publishAlert(alert({ pair: "SOL/USD" }));
      await client.request({ op: "subscribe", id: `t${i}`, pairs: [i % 2 === 0 ? "BTC/USD" : "ETH/USD"] });
    }
    const refused = await client.request({ op: "subscribe", id: "old", pairs: [], since: 0 });
    expect(refused).toMatchObject({ type: "error", code: "bad_request" });
    expect(refused["message"]).toMatch(/reconnect/);
    expect(await metricValue(harness.metrics.wsResumeRangesForgotten)).toBeGreaterThan(0);
    const lastSeq = harness.hub.lastSeq();
    expect(
      await client.request({ op: "subscribe", id: "recent", pairs: [], since: lastSeq - 2 }),
    ).toMatchObject({
      type: "subscribed",
    });
    client.close();
  });

  it("matches the reference model for random subscribe/unsubscribe/publish sequences", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArbitrary, { minLength: 1, maxLength: 25 }), async (ops) => {
        await runAgainstModel(ops);
      }),
      { numRuns: 100 },
    );
  }, 60_000);
});
