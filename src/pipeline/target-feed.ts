// What a target delivered (a poll or the stream), folded into the domain: observations, health, price ticks.
import { observe, type Observation } from "../domain/monitor.js";
import type { Result } from "../domain/errors.js";
import type { PairPrice, TargetSpec } from "../domain/types.js";
import type { EventHub } from "./event-hub.js";
import { fedPrice, isRepeatedPrice } from "./price-dedup.js";
import { publish, type Runner, type RunningTarget } from "./runner.js";

/** Fold a result into the domain and publish its transitions and price tick; a streamed target's repeated price is dropped. */
export function feed(runner: Runner, target: RunningTarget, result: Result<unknown>): void {
  const { deps } = runner;
  const streamed = target.streamed;
  if (streamed !== null && result.ok) {
    // the stream and a poll may deliver the same price: one observation per price timestamp
    const price = result.value as PairPrice;
    if (isRepeatedPrice(streamed.lastFed, price)) return;
    streamed.lastFed = fedPrice(price);
  }
  const observedAtMs = deps.nowMs();
  const observation = toObservation(target.plan.spec, result, observedAtMs);
  publish(runner, observe(runner.state, observation, runner.rules, observedAtMs));
  publishPriceTick(deps.hub, observation);
}

/** A target delivered data (a poll or the stream): healthy, with its last-success time. */
export function recordSuccess(runner: Runner, target: RunningTarget): void {
  target.failures = 0;
  target.everSucceeded = true;
  target.health = { kind: "ok" };
  runner.deps.metrics.targetLastSuccess.set({ target: target.plan.spec.id }, runner.wallNowMs() / 1000);
}

/** A live price for `prices` subscribers: off-chain prices, and on-chain ones whose decimals are known. */
function publishPriceTick(hub: EventHub, observation: Observation): void {
  if (observation.kind === "offchain" && observation.result.ok) {
    const { target, result } = observation;
    const price = result.value;
    hub.publishPrice({
      pair: target.pair,
      market: "offchain",
      target: target.id,
      price: price.price.text,
      numSources: price.numSources,
      timestamp: new Date(price.timestampMs).toISOString(),
      observedAt: new Date(observation.observedAtMs).toISOString(),
      entryType: target.entryType,
    });
  } else if (
    observation.kind === "onchain" &&
    observation.result.ok &&
    observation.result.value.decimalsKnown
  ) {
    const { target, result } = observation;
    const entry = result.value;
    hub.publishPrice({
      pair: target.pair,
      market: "onchain",
      target: target.id,
      price: entry.price.text,
      numSources: entry.numSources,
      timestamp: new Date(entry.lastUpdatedMs).toISOString(),
      observedAt: new Date(observation.observedAtMs).toISOString(),
      network: target.network,
    });
  }
}

/** Wrap a poll outcome (or a streamed result) as the domain observation of its target kind. */
export function toObservation(spec: TargetSpec, outcome: Result<unknown>, observedAtMs: number): Observation {
  const result = outcome.ok
    ? { ok: true as const, value: outcome.value }
    : { ok: false as const, error: outcome.error };
  // the value's type follows from the spec kind: fetchTarget returns the matching snapshot
  return { kind: spec.kind, target: spec, result, observedAtMs } as Observation;
}
