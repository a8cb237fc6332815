// The session index: an event visits only the sessions that can want it, and the indexed fan-out delivers exactly what filtering every session did.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SEVERITIES, type BusEvent, type RuleKind, type Severity } from "../../../src/domain/events.js";
import {
  EMPTY_FILTER,
  applySubscribe,
  applyUnsubscribe,
  matchesEvent,
  type SubscriptionFilter,
} from "../../../src/sinks/ws/filter.js";
import { CHANNELS, type Channel } from "../../../src/sinks/ws/protocol.js";
import { createSessionIndex } from "../../../src/sinks/ws/session-index.js";
import { alert, tick } from "./harness.js";

const PAIRS = ["BTC/USD", "ETH/USD", "SOL/USD", "DOGE/USD"];
const RULES: readonly RuleKind[] = ["price_change", "stale_price", "upstream_error"];

const subscribe = (
  channels: Channel[],
  options: { pairs?: string[]; rules?: string[]; minSeverity?: Severity } = {},
  from: SubscriptionFilter = EMPTY_FILTER,
): SubscriptionFilter => applySubscribe(from, { op: "subscribe", id: null, channels, ...options });

const priceEvent = (pair: string): BusEvent => ({ type: "price", tick: tick(pair) });
const alertEvent = (pair: string, seq = 1): BusEvent => ({ type: "alert", seq, alert: alert({ pair }) });
const lifecycleEvent: BusEvent = {
  type: "lifecycle",
  seq: 1,
  event: "config_reloaded",
  at: "2026-11-22T10:00:00.000Z",
  version: "9.9.9",
};

/** An index whose exact predicate counts its calls, and a way to list the sessions an event visits. */
function countingIndex() {
  let evaluations = 0;
  const index = createSessionIndex<number>((filter, event) => {
    evaluations += 1;
    return matchesEvent(filter, event);
  });
  const visited = (event: BusEvent): number[] => {
    const out: number[] = [];
    index.forEachMatching(event, (session) => out.push(session));
    return out.sort((a, b) => a - b);
  };
  return { index, visited, evaluations: () => evaluations };
}

describe("session index: what an event visits", () => {
  it("offers a price tick to no one when 1 000 sessions subscribe to alerts only", () => {
    const { index, visited, evaluations } = countingIndex();
    const filters = [
      subscribe(["alerts"]),
      subscribe(["alerts", "lifecycle"], { pairs: ["BTC/USD"] }),
      subscribe(["alerts"], { minSeverity: "critical" }),
    ];
    for (let session = 0; session < 1_000; session++)
      index.move(session, EMPTY_FILTER, filters[session % filters.length]!);
    expect(index.sessionsOn("prices")).toBe(0);
    expect(visited(priceEvent("BTC/USD"))).toEqual([]);
    expect(evaluations()).toBe(0);
    // an alert evaluates each distinct filter of its channel once, whatever the number of sessions
    expect(visited(alertEvent("BTC/USD"))).toHaveLength(667);
    expect(evaluations()).toBe(3);
  });

  it("offers a tick of one pair only to the filters taking every pair or naming that pair", () => {
    const { index, visited, evaluations } = countingIndex();
    // session i watches the prices of PAIRS[i % 4]; session 100 watches every pair's prices
    for (let session = 0; session < 100; session++)
      index.move(session, EMPTY_FILTER, subscribe(["prices"], { pairs: [PAIRS[session % 4]!] }));
    index.move(100, EMPTY_FILTER, subscribe(["prices"]));
    const got = visited(priceEvent("ETH/USD"));
    expect(got).toEqual([...Array.from({ length: 25 }, (_, i) => i * 4 + 1), 100]);
    // the ETH/USD filter and the every-pair filter; never the BTC, SOL or DOGE ones
    expect(evaluations()).toBe(2);
  });

  it("offers an alert without a pair label only to filters taking every pair", () => {
    const { index, visited } = countingIndex();
    index.move(1, EMPTY_FILTER, subscribe(["alerts"], { pairs: ["BTC/USD"] }));
    index.move(2, EMPTY_FILTER, subscribe(["alerts"]));
    const vaultAlert: BusEvent = { type: "alert", seq: 1, alert: { ...alert(), labels: { vault: "v1" } } };
    expect(visited(vaultAlert)).toEqual([2]);
  });

  it("follows filter changes and forgets closed sessions, counting sessions per channel", () => {
    const { index, visited } = countingIndex();
    const prices = subscribe(["prices"], { pairs: ["BTC/USD"] });
    index.move(1, EMPTY_FILTER, prices);
    index.move(2, EMPTY_FILTER, prices);
    expect(index.sessionsOn("prices")).toBe(2);
    const both = subscribe(["alerts"], {}, prices);
    index.move(1, prices, both);
    expect(visited(priceEvent("BTC/USD"))).toEqual([1, 2]);
    expect(visited(alertEvent("ETH/USD"))).toEqual([]);
    expect(visited(alertEvent("BTC/USD"))).toEqual([1]);
    index.move(2, prices, EMPTY_FILTER);
    expect(index.sessionsOn("prices")).toBe(1);
    expect(visited(priceEvent("BTC/USD"))).toEqual([1]);
    index.move(1, both, EMPTY_FILTER);
    expect(CHANNELS.map((channel) => index.sessionsOn(channel))).toEqual([0, 0, 0]);
    expect(visited(priceEvent("BTC/USD"))).toEqual([]);
  });
});

/** One step of a client population: a subscribe, an unsubscribe, a close, or an event to fan out. */
type Step =
  | {
      readonly kind: "subscribe";
      readonly session: number;
      readonly channels: Channel[];
      readonly pairs?: string[];
      readonly rules?: string[];
      readonly minSeverity?: Severity;
    }
  | { readonly kind: "unsubscribe"; readonly session: number; readonly channels: Channel[]; pairs: string[] }
  | { readonly kind: "close"; readonly session: number }
  | { readonly kind: "event"; readonly event: BusEvent };

const names = <T extends string>(all: readonly T[]) => fc.subarray([...all]);
const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  fc.record(
    {
      kind: fc.constant("subscribe" as const),
      session: fc.nat(7),
      channels: names(CHANNELS),
      pairs: names(PAIRS),
      rules: names(RULES),
      minSeverity: fc.constantFrom(...SEVERITIES),
    },
    { requiredKeys: ["kind", "session", "channels"] },
  ),
  fc.record({
    kind: fc.constant("unsubscribe" as const),
    session: fc.nat(7),
    channels: names(CHANNELS),
    pairs: names(PAIRS),
  }),
  fc.record({ kind: fc.constant("close" as const), session: fc.nat(7) }),
  fc.record({
    kind: fc.constant("event" as const),
    event: fc.oneof(
      fc.constantFrom(...PAIRS).map(priceEvent),
      fc.constant(lifecycleEvent),
      fc
        .record({
          pair: fc.option(fc.constantFrom(...PAIRS)),
          rule: fc.constantFrom(...RULES),
          severity: fc.constantFrom(...SEVERITIES),
        })
        .map(({ pair, rule, severity }): BusEvent => {
          const payload = alert({ rule, severity, ...(pair === null ? {} : { pair }) });
          return {
            type: "alert",
            seq: 1,
            alert: pair === null ? { ...payload, labels: { market: "onchain" } } : payload,
          };
        }),
    ),
  }),
);

describe("session index: fast path equals exact path", () => {
  it("delivers each event to exactly the sessions whose filter matches it, through any filter changes", () => {
    fc.assert(
      fc.property(fc.array(stepArbitrary, { maxLength: 60 }), (steps) => {
        const index = createSessionIndex<number>();
        const filters = new Map<number, SubscriptionFilter>();
        const change = (session: number, next: SubscriptionFilter): void => {
          index.move(session, filters.get(session) ?? EMPTY_FILTER, next);
          filters.set(session, next);
        };
        for (const step of steps) {
          switch (step.kind) {
            case "subscribe": {
              const { kind: _kind, session, ...message } = step;
              change(
                session,
                applySubscribe(filters.get(session) ?? EMPTY_FILTER, {
                  op: "subscribe",
                  id: null,
                  ...message,
                }),
              );
              break;
            }
            case "unsubscribe": {
              const { session, channels, pairs } = step;
              const result = applyUnsubscribe(filters.get(session) ?? EMPTY_FILTER, {
                op: "unsubscribe",
                id: null,
                channels,
                pairs,
              });
              if (result.ok) change(session, result.filter);
              break;
            }
            case "close":
              change(step.session, EMPTY_FILTER);
              filters.delete(step.session);
              break;
            case "event": {
              // the old fan-out: every session, its filter evaluated
              const exact = [...filters]
                .filter(([, filter]) => matchesEvent(filter, step.event))
                .map(([session]) => session)
                .sort((a, b) => a - b);
              const fast: number[] = [];
              index.forEachMatching(step.event, (session) => fast.push(session));
              expect(fast.sort((a, b) => a - b)).toEqual(exact);
              break;
            }
          }
        }
        for (const channel of CHANNELS)
          expect(index.sessionsOn(channel)).toBe(
            [...filters.values()].filter((filter) => filter.channels.has(channel)).length,
          );
      }),
      { numRuns: 500 },
    );
  });
});
