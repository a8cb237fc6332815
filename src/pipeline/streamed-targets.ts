// The runner's streamed targets: fed by the stream feed, polled only while it is stale (or for components, slowly).
import { observe } from "../domain/monitor.js";
import type { PmError } from "../domain/errors.js";
import type { RuleConfig } from "../domain/rules/index.js";
import type { PairPrice } from "../domain/types.js";
import type { StreamFeedHooks, StreamedTargetRef } from "./stream-feed.js";
import { publish, releaseWarmupHold, type Runner, type RunningTarget } from "./runner.js";
import { feed, recordSuccess } from "./target-feed.js";
import { startPoll } from "./target-poll.js";

/** The hooks through which the stream feed drives the runner's streamed targets. */
export function streamHooks(runner: Runner): StreamFeedHooks {
  const streamedTarget = (id: string): RunningTarget | undefined => {
    const target = runner.running.get(id);
    return target?.streamed === null ? undefined : target;
  };
  return {
    price(id, price) {
      const target = streamedTarget(id);
      if (target?.streamed == null) return;
      target.streamed.lastEventAtMs = runner.wallNowMs();
      runner.deps.recorder?.streamed(id, { event: "price", timestampMs: price.timestampMs });
      recordSuccess(runner, target);
      releaseWarmupHold(runner, target);
      feed(runner, target, { ok: true, value: price }, true);
    },
    history(id, prices) {
      const target = streamedTarget(id);
      if (target === undefined || target.plan.spec.kind !== "offchain") return;
      runner.deps.recorder?.streamed(id, { event: "history" });
      const points = prices.map((p: PairPrice) => ({ atMs: p.timestampMs, price: p.price }));
      const nowMs = runner.deps.nowMs();
      const observation = { kind: "history" as const, target: target.plan.spec, points };
      publish(runner, observe(runner.state, observation, runner.rules, nowMs));
    },
    modeChanged(id, mode, error) {
      const target = streamedTarget(id);
      if (target?.streamed == null) return;
      target.streamed.mode = mode;
      if (error !== null) fallBack(runner, target, error);
      else runner.deps.logger.info({ target: id }, "price stream back: polls stop");
      syncPoll(runner, target);
    },
  };
}

/**
 * The stream went stale for a target: one typed failure (it counts toward upstream_error, and the API shows it as
 * the latest poll until a fallback poll ends), then its polls run.
 */
function fallBack(runner: Runner, target: RunningTarget, error: PmError): void {
  const { logger } = runner.deps;
  logger.warn({ target: target.plan.spec.id, code: error.code, err: error }, "price stream stale: polling");
  target.failures += 1;
  target.lastPollAtMs = runner.wallNowMs();
  target.lastPollDurationMs = 0;
  target.lastError = error;
  target.health = {
    kind: "failing",
    code: error.code,
    consecutiveFailures: target.failures,
    everSucceeded: target.everSucceeded,
  };
  if (runner.holding()) return;
  runner.deps.recorder?.streamed(target.plan.spec.id, { event: "stale", error });
  feed(runner, target, { ok: false, error });
}

/** Whether a streamed target needs the slow component poll: an off-chain component_deviation rule is enabled. */
function needsComponents(rules: readonly RuleConfig[]): boolean {
  return rules.some(
    (rule) => rule.kind === "component_deviation" && rule.enabled && rule.market === "offchain",
  );
}

/** Run the poll a streamed target needs now: the fallback while stale, the component poll while streaming (if any rule reads components). */
export function syncPoll(runner: Runner, target: RunningTarget): void {
  const streamed = target.streamed;
  if (streamed === null) return;
  const periodMs = runner.stream?.componentsPeriodMs ?? target.plan.periodMs;
  const wanted = streamed.mode === "poll" ? "fallback" : needsComponents(runner.rules) ? "components" : null;
  if ((streamed.poll?.kind ?? null) === wanted) return;
  stopStreamedPoll(target);
  if (wanted === null) return;
  const subscription =
    wanted === "fallback"
      ? startPoll(runner, target, target.plan.periodMs)
      : startPoll(runner, target, periodMs, COMPONENT_POLL_SLOT_MS);
  streamed.poll = { kind: wanted, subscription };
}

/**
 * The coalescing slot of the component polls (ms): they share whole seconds instead of `monitors.coalesceMs`. Spread
 * over ten seconds, 1 000 of them on 100 ms slots took ~0.3–0.5 ms CPU each (a wake-up served a few responses); on
 * one-second slots the streamed daemon cost less in alternating runs (docs/benchmarks.md), though the cost per poll
 * was not measured apart. A poll moves by at most half a second of its minute.
 */
const COMPONENT_POLL_SLOT_MS = 1_000;

/** Stop a streamed target's poll, if it runs one. */
export function stopStreamedPoll(target: RunningTarget): void {
  target.streamed?.poll?.subscription.unsubscribe();
  if (target.streamed !== null) target.streamed.poll = null;
}

/** After a config update: the feed learns the streamed targets, and each runs the poll the rules now need. */
export function updateStreams(runner: Runner): void {
  if (runner.streams === null) return;
  const refs: StreamedTargetRef[] = [];
  for (const target of runner.running.values()) {
    const spec = target.plan.spec;
    if (target.streamed === null || spec.kind !== "offchain") continue;
    refs.push({ id: spec.id, pair: spec.pair, interval: spec.interval });
    syncPoll(runner, target);
  }
  runner.streams.update(refs);
}
