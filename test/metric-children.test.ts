// Bound metric children: what they add and set reaches prom-client by the next read, exactly as direct calls would.
import fc from "fast-check";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { ChildCounter, ChildGauge } from "../src/metric-children.js";

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
});
