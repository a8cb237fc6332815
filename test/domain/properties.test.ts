// Property tests: lifecycle invariants hold for any sequence of observations, failures and ticks.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMonitorState, observe, tick } from "../../src/domain/monitor.js";
import { fingerprintOf } from "../../src/domain/fingerprint.js";
import { numberToDecimalString } from "../../src/domain/format.js";
import { PriceHistory } from "../../src/domain/price-history.js";
import { T0, obs, p, pairPrice, rule } from "./helpers.js";

const rules = [
  rule(
    "low_sources",
    { market: "offchain" },
    {
      threshold: 3,
      clearThreshold: 4,
      forMs: 2000,
      minFiringMs: 1500,
      repeatIntervalMs: 5000,
      flapWindowMs: 20_000,
      flapMaxTransitions: 3,
    },
  ),
  rule("upstream_error", {}, { threshold: 2 }),
  rule("stale_price", { market: "offchain" }, { threshold: 4000 }),
  rule("price_change", { windowMs: 3000, market: "offchain" }, { threshold: 0.05, clearThreshold: 0.03 }),
];

const step = fc.oneof(
  fc.record({
    kind: fc.constant("ok" as const),
    sources: fc.integer({ min: 0, max: 8 }),
    price: fc.integer({ min: 90, max: 110 }),
  }),
  fc.record({ kind: fc.constant("fail" as const) }),
  fc.record({ kind: fc.constant("tick" as const) }),
);

describe("alert lifecycle properties", () => {
  it("every resolve follows a firing of the same fingerprint; no two firsts without a resolve", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(step, fc.integer({ min: 1, max: 3000 })), { maxLength: 80 }), (steps) => {
        const state = createMonitorState();
        const firing = new Set<string>();
        let now = T0;
        for (const [s, dt] of steps) {
          now += dt;
          const e =
            s.kind === "tick"
              ? tick(state, rules, now)
              : s.kind === "fail"
                ? observe(state, obs.offFail(now), rules, now)
                : observe(state, obs.off(pairPrice(String(s.price), now, [], s.sources), now), rules, now);
          for (const t of e.transitions) {
            if (t.reason === "first") {
              expect(firing.has(t.fingerprint)).toBe(false);
              firing.add(t.fingerprint);
            } else if (t.reason === "repeat") {
              expect(firing.has(t.fingerprint)).toBe(true);
            } else {
              expect(firing.has(t.fingerprint)).toBe(true);
              expect(t.endsAt).not.toBeNull();
              firing.delete(t.fingerprint);
            }
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("fingerprints ignore label order and are 16 hex chars", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 8 })),
        (labels) => {
          const reversed = Object.fromEntries(Object.entries(labels).reverse());
          const a = fingerprintOf("price_change", labels);
          expect(a).toBe(fingerprintOf("price_change", reversed));
          expect(a).toMatch(/^[0-9a-f]{16}$/);
        },
      ),
    );
  });

  it("numberToDecimalString round-trips every finite double", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        const text = numberToDecimalString(value)!;
        expect(text).not.toMatch(/e/);
        expect(Number(text)).toBe(value === 0 ? 0 : value);
      }),
    );
  });
});

describe("PriceHistory", () => {
  it("finds the point at or just before a time and keeps one point before the window", () => {
    const history = new PriceHistory(10_000, 64);
    for (let i = 0; i <= 30; i++) history.push(T0 + i * 1000, p(String(100 + i)));
    expect(history.priceAt(history.indexAtOrBefore(T0 + 25_500))?.text).toBe("125");
    expect(history.timeAt(0)).toBe(T0 + 20_000);
    expect(history.indexAtOrBefore(T0 + 19_999)).toBe(-1);
  });

  it("stays bounded and merges warm-up points in order", () => {
    const history = new PriceHistory(1_000_000, 16);
    for (let i = 0; i < 1000; i++) history.push(T0 + i * 1000, p("1"));
    expect(history.size).toBeLessThanOrEqual(16);
    const fresh = new PriceHistory(60_000, 16);
    fresh.push(T0, p("3"));
    fresh.insertAll([
      { atMs: T0 - 30_000, price: p("2") },
      { atMs: T0 - 50_000, price: p("1") },
    ]);
    expect([0, 1, 2].map((i) => fresh.priceAt(i)?.text)).toEqual(["1", "2", "3"]);
  });
});
