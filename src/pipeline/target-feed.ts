// What a target delivered (a poll or the stream), folded into the domain: observations, health, price ticks.
import { observe, type Observation } from "../domain/monitor.js";
import type { Result } from "../domain/errors.js";
import type { TargetHealth } from "../domain/readiness.js";
import type { PairPrice, TargetSpec } from "../domain/types.js";
import type { EventHub } from "./event-hub.js";
import { checksRepeats, isRepeatedPrice, refeed, shareUnchangedComponents } from "./price-dedup.js";
import { publish, type Runner, type RunningTarget } from "./runner.js";

/**
 * Fold a result into the domain and publish its transitions and price tick; a price the stream and a poll both
 * delivered is dropped the second time (`viaStream`: the stream delivered this one).
 */
export function feed(
  runner: Runner,
  target: RunningTarget,
  result: Result<unknown>,
  viaStream = false,
): void {
  const { deps } = runner;
  let tickAgain = true;
  if (result.ok && target.plan.spec.kind === "offchain") {
    // one observation per price timestamp, also across a reload that switched the target's transport
    const decoded = result.value as PairPrice;
    const price =
      target.lastFed === null ? decoded : shareUnchangedComponents(target.lastFed.components, decoded);
    if (checksRepeats(target.streamed !== null, target.lastFed)) {
      if (isRepeatedPrice(target.lastFed, price)) return;
      // a poll adding components to a price already fed updates them, but clients already have its tick
      tickAgain = target.lastFed?.timestampMs !== price.timestampMs;
    }
    target.lastFed = refeed(target.lastFed, price, viaStream);
  }
  const observedAtMs = deps.nowMs();
  const observation = toObservation(target.plan.spec, result, observedAtMs);
  publish(runner, observe(runner.state, observation, runner.rules, observedAtMs));
  if (tickAgain) publishPriceTick(deps.hub, observation);
}

/** The health of every target whose latest poll succeeded: one immutable value, not an object per poll. */
const HEALTHY: TargetHealth = Object.freeze({ kind: "ok" });

/** A target delivered data (a poll or the stream): healthy, with its last-success time. */
export function recordSuccess(runner: Runner, target: RunningTarget): void {
  target.failures = 0;
  target.everSucceeded = true;
  target.health = HEALTHY;
  target.lastSuccess.set(runner.wallNowMs() / 1000);
}

/** A live price for `prices` subscribers: off-chain prices, and on-chain ones whose decimals are known (built only when wanted). */
function publishPriceTick(hub: EventHub, observation: Observation): void {
  if (observation.kind === "offchain" && observation.result.ok) {
    const { target, result, observedAtMs } = observation;
    const price = result.value;
    hub.publishPrice(target.id, () => ({
      pair: target.pair,
      market: "offchain",
      target: target.id,
      price: price.price.text,
      numSources: price.numSources,
      timestamp: new Date(price.timestampMs).toISOString(),
      observedAt: new Date(observedAtMs).toISOString(),
      entryType: target.entryType,
    }));
  } else if (
    observation.kind === "onchain" &&
    observation.result.ok &&
    observation.result.value.decimalsKnown
  ) {
    const { target, result, observedAtMs } = observation;
    const entry = result.value;
    hub.publishPrice(target.id, () => ({
      pair: target.pair,
      market: "onchain",
      target: target.id,
      price: entry.price.text,
      numSources: entry.numSources,
      timestamp: new Date(entry.lastUpdatedMs).toISOString(),
      observedAt: new Date(observedAtMs).toISOString(),
      network: target.network,
    }));
  }
}

/**
 * Wrap a poll outcome (or a streamed result) as the domain observation of its target kind. The outcome is the
 * observation's result as it is (a poll's also carries its duration, which the domain does not read): no copy per poll.
 */
export function toObservation(spec: TargetSpec, outcome: Result<unknown>, observedAtMs: number): Observation {
  // the value's type follows from the spec kind: targetFetcher returns the matching snapshot
  return { kind: spec.kind, target: spec, result: outcome, observedAtMs } as Observation;
}
