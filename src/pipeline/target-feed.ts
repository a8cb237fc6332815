// What a target delivered (a poll or the stream), folded into the domain: observations, health, price ticks.
import { observe, type Observation } from "../domain/monitor.js";
import type { Result } from "../domain/errors.js";
import type { TargetHealth } from "../domain/readiness.js";
import type { PriceTick } from "../domain/events.js";
import type { ScaledPrice } from "../domain/price.js";
import type { PairPrice, TargetSpec } from "../domain/types.js";
import type { EventHub } from "./event-hub.js";
import { checksRepeats, isRepeatedPrice, refeed, storePrice } from "./price-dedup.js";
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
  let fed = result;
  if (result.ok && target.plan.spec.kind === "offchain") {
    // one observation per price timestamp, also across a reload that switched the target's transport
    const decoded = result.value as PairPrice;
    if (checksRepeats(target.streamed !== null, target.lastFed)) {
      if (isRepeatedPrice(target.lastFed, decoded)) return;
      // a poll adding components to a price already fed updates them, but clients already have its tick
      tickAgain = target.lastFed?.timestampMs !== decoded.timestampMs;
    }
    const price = storePrice(target.lastFed?.price ?? null, decoded);
    target.lastFed = refeed(target.lastFed, price, viaStream);
    fed = { ok: true, value: price };
  }
  const observedAtMs = deps.nowMs();
  const observation = toObservation(target.plan.spec, fed, observedAtMs);
  publish(runner, observe(runner.state, observation, runner.rules, observedAtMs));
  if (tickAgain) publishPriceTick(deps.hub, target, observation);
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

/** The targets whose prices are ticked: off-chain and on-chain. */
type PricedSpec = Extract<TargetSpec, { kind: "offchain" | "onchain" }>;

/**
 * A target's latest price for `prices` subscribers, rewritten by each price fed to it: the hub remembers one bound
 * `build` per target instead of a closure (and its context) per poll, which lived a period and was promoted. Its
 * fields are the immutable values of one observation (the price object is never changed once decoded), written
 * together, and every tick `build` returns is a new object: nothing built from it changes when the next price comes.
 */
export class LatestPrice {
  private spec: PricedSpec;
  private price: ScaledPrice;
  private numSources: number;
  private timestampMs: number;
  private observedAtMs: number;
  /** The tick of the price written last (a new object per call); one function for the target's whole life. */
  readonly build = (): PriceTick => this.tick();

  constructor(
    spec: PricedSpec,
    price: ScaledPrice,
    numSources: number,
    timestampMs: number,
    observedAtMs: number,
  ) {
    this.spec = spec;
    this.price = price;
    this.numSources = numSources;
    this.timestampMs = timestampMs;
    this.observedAtMs = observedAtMs;
  }

  /** Replace the price (all fields at once, from one observation). */
  write(
    spec: PricedSpec,
    price: ScaledPrice,
    numSources: number,
    timestampMs: number,
    observedAtMs: number,
  ): void {
    this.spec = spec;
    this.price = price;
    this.numSources = numSources;
    this.timestampMs = timestampMs;
    this.observedAtMs = observedAtMs;
  }

  private tick(): PriceTick {
    const { spec, numSources } = this;
    const price = this.price.text;
    const timestamp = new Date(this.timestampMs).toISOString();
    const observedAt = new Date(this.observedAtMs).toISOString();
    const { pair, id: target } = spec;
    return spec.kind === "offchain"
      ? {
          pair,
          market: "offchain",
          target,
          price,
          numSources,
          timestamp,
          observedAt,
          entryType: spec.entryType,
        }
      : { pair, market: "onchain", target, price, numSources, timestamp, observedAt, network: spec.network };
  }
}

/** A live price for `prices` subscribers: off-chain prices, and on-chain ones whose decimals are known (built only when wanted). */
function publishPriceTick(hub: EventHub, target: RunningTarget, observation: Observation): void {
  let price: ScaledPrice;
  let numSources: number;
  let timestampMs: number;
  if (observation.kind === "offchain" && observation.result.ok) {
    ({ price, numSources, timestampMs } = observation.result.value);
  } else if (
    observation.kind === "onchain" &&
    observation.result.ok &&
    observation.result.value.decimalsKnown
  ) {
    ({ price, numSources, lastUpdatedMs: timestampMs } = observation.result.value);
  } else return;
  const { target: spec, observedAtMs } = observation;
  if (target.latestPrice === null)
    target.latestPrice = new LatestPrice(spec, price, numSources, timestampMs, observedAtMs);
  else target.latestPrice.write(spec, price, numSources, timestampMs, observedAtMs);
  hub.publishPrice(spec.id, target.latestPrice.build);
}

/**
 * Wrap a poll outcome (or a streamed result) as the domain observation of its target kind. The outcome is the
 * observation's result as it is (a poll's also carries its duration, which the domain does not read): no copy per poll.
 */
export function toObservation(spec: TargetSpec, outcome: Result<unknown>, observedAtMs: number): Observation {
  // the value's type follows from the spec kind: targetFetcher returns the matching snapshot
  return { kind: spec.kind, target: spec, result: outcome, observedAtMs } as Observation;
}
