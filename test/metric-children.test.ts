// Bound metric children: what they add and set reaches prom-client by the next read, exactly as direct calls would.
import fc from "fast-check";
import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { ChildCounter, ChildGauge, ChildHistogram } from "../src/metric-children.js";

const ENDPOINTS = ["pair_price", "onchain"] as const;
const OUTCOMES = ["ok", "error"] as const;

describe("metric children", () => {
  it("a counter read after child increments shows the same series as direct increments", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...ENDPOINTS), fc.constantFrom(...OUTCOMES), fc.nat(5))),
        fc.nat(3),
        async (steps, readEvery) => {
          const registry = new Registry();
          const config = { help: "h", labelNames: ["endpoint", "outcome"] as const, registers: [registry] };
          const bound = new ChildCounter({ name: "bound_total", ...config });
          const direct = new ChildCounter({ name: "direct_total", ...config });
          for (const [i, [endpoint, outcome, by]] of steps.entries()) {
            bound.childFor({ endpoint, outcome }).inc(by);
            direct.inc({ endpoint, outcome }, by);
            // reads in between flush what was pending, and nothing twice
            if (readEvery > 0 && i % readEvery === 0) await bound.get();
          }
          const values = async (counter: ChildCounter<"endpoint" | "outcome">) =>
            (await counter.get()).values.map(({ labels, value }) => [labels, value]);
          expect(await values(bound)).toEqual(await values(direct));
        },
      ),
      { numRuns: 100 },
    );
  });

  it("a gauge shows a child's latest value, and a removed series stays gone", async () => {
    const registry = new Registry();
    const gauge = new ChildGauge({ name: "g", help: "h", labelNames: ["target"], registers: [registry] });
    const a = gauge.childFor({ target: "a" });
    const b = gauge.childFor({ target: "b" });
    a.set(1);
    a.set(2);
    b.set(5);
    expect(await registry.metrics()).toContain('g{target="a"} 2\ng{target="b"} 5');
    gauge.remove({ target: "b" });
    b.set(6); // a late set on a removed series is never written
    expect(await registry.metrics()).not.toContain('target="b"');
    gauge.childFor({ target: "b" }).set(7);
    expect(await registry.metrics()).toContain('g{target="b"} 7');
  });

  it("a histogram read after child observations shows the same buckets, sum and count as prom-client's own", async () => {
    const BUCKETS = [0.01, 0.1, 1];
    // on and around the bounds, beyond the last, negative and zero
    const value = fc.oneof(
      fc.constantFrom(0, 0.01, 0.1, 1, -1, 5),
      fc.double({ min: -2, max: 3, noNaN: true }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...ENDPOINTS), value)),
        fc.nat(3),
        async (steps, readEvery) => {
          const config = { help: "h", labelNames: ["endpoint"] as const, buckets: BUCKETS };
          const bound = new ChildHistogram({ name: "bound_seconds", ...config, registers: [new Registry()] });
          const direct = new Histogram({ name: "direct_seconds", ...config, registers: [new Registry()] });
          for (const [i, [endpoint, seconds]] of steps.entries()) {
            bound.childFor({ endpoint }).observe(seconds);
            direct.observe({ endpoint }, seconds);
            if (readEvery > 0 && i % readEvery === 0) await bound.get();
          }
          const values = async (histogram: Histogram<"endpoint">) =>
            (await histogram.get()).values.map(({ labels, value, metricName }) => [
              metricName?.replace(/^(bound|direct)_seconds/, ""),
              labels,
              // the same observations summed in another grouping: equal but for rounding (and the sign of a zero)
              Math.round(value * 1e9) / 1e9 || 0,
            ]);
          expect(await values(bound)).toEqual(await values(direct));
        },
      ),
      { numRuns: 100 },
    );
  });

  it("a histogram child refuses what prom-client refuses, and counts again after a reset", async () => {
    const registry = new Registry();
    const histogram = new ChildHistogram({
      name: "h_seconds",
      help: "h",
      labelNames: ["endpoint"],
      buckets: [1],
      registers: [registry],
    });
    expect(() => histogram.childFor({ nope: "x" } as never)).toThrow(/label/i);
    const child = histogram.childFor({ endpoint: "a" });
    expect(() => child.observe(Number.NaN)).toThrow(TypeError);
    child.observe(0.5);
    histogram.observe({ endpoint: "a" }, 0.25); // a direct observation of the same series before the first flush
    expect(await registry.metrics()).toContain('h_seconds_count{endpoint="a"} 2');
    histogram.reset();
    child.observe(2);
    const text = await registry.metrics();
    expect(text).toContain('h_seconds_bucket{le="1",endpoint="a"} 0');
    expect(text).toContain('h_seconds_sum{endpoint="a"} 2');
    expect(text).toContain('h_seconds_count{endpoint="a"} 1');
  });
});
