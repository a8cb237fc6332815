// A target's polls: one poll stream per period, each outcome in metrics, logs and health, then fed to the domain.
import type { Subscription } from "rxjs";
import type { CounterChild } from "../metric-children.js";
import { poll$, type PollOutcome } from "./poll.js";
import { releaseWarmupHold, type Runner, type RunningTarget } from "./runner.js";
import { feed, recordSuccess } from "./target-feed.js";
import { endpointOf, targetFetcher } from "./targets.js";

/**
 * Poll a target every `periodMs`, each outcome fed through onOutcome. Its poll times round to the coalescing slot
 * (`monitors.coalesceMs`, at least `minSlotMs` unless coalescing is off), at most a tenth of the period and a fifth
 * of the poll timeout: the timeout is due on the same grid, and rounding may move it by half a slot.
 */
export function startPoll(
  runner: Runner,
  target: RunningTarget,
  periodMs: number,
  minSlotMs = 0,
): Subscription {
  const { deps, monitors } = runner;
  const coalesceMs = monitors?.coalesceMs ?? 0;
  const slotMs = coalesceMs === 0 ? 0 : Math.max(coalesceMs, minSlotMs);
  const plan = target.plan;
  const { recorder } = deps;
  const fetchOnce = targetFetcher(deps.client, plan.spec);
  const fetch = (signal: AbortSignal): Promise<unknown> => fetchOnce(signal, deps.nowMs());
  const endpoint = endpointOf(plan.spec);
  const counts: PollCounts = {
    ok: deps.metrics.polls.childFor({ endpoint, outcome: "ok" }),
    error: deps.metrics.polls.childFor({ endpoint, outcome: "error" }),
  };
  const poll = poll$(
    recorder === undefined ? fetch : (signal) => recorder.within(plan.spec.id, "poll", () => fetch(signal)),
    {
      periodMs,
      jitter: monitors?.jitter ?? 0,
      spreadMs: monitors?.spreadMs ?? 10_000,
      // taken over from a dead member: polled again at once (its last poll is a lease old), its phase still spread
      firstAtOnce: runner.takingOver,
      maxBackoffMs: Math.max(periodMs, monitors?.maxBackoffMs ?? 60_000),
      timeoutMs: deps.pollTimeoutMs,
      random: deps.random,
      // coalescing never moves a poll by more than 5 % of its period, nor its timeout by more than 10 % of it
      scheduler: runner.pollClock(
        Math.min(slotMs, Math.floor(periodMs / 10), Math.floor(deps.pollTimeoutMs / 5)),
      ),
    },
  );
  return poll.subscribe((outcome) => onOutcome(runner, target, outcome, counts));
}

/** A target's poll counters, bound once (one per outcome). */
interface PollCounts {
  readonly ok: CounterChild;
  readonly error: CounterChild;
}

/** One poll outcome: metrics, logs and health, then the domain (unless a failure overlapped the daemon's own stall). */
function onOutcome(
  runner: Runner,
  target: RunningTarget,
  outcome: PollOutcome<unknown>,
  counts: PollCounts,
): void {
  const held = runner.holding();
  recordOutcome(runner, target, outcome, counts);
  releaseWarmupHold(runner, target);
  runner.deps.recorder?.polled(target.plan.spec.id, outcome, held && !outcome.ok);
  // a failure while verdicts are held overlapped the daemon's own stall (a timeout, most likely): not counted
  if (held && !outcome.ok) return;
  feed(runner, target, outcome);
}

/** The outcome in metrics, logs (once per failure burst at warn) and the target's health. */
function recordOutcome(
  runner: Runner,
  target: RunningTarget,
  outcome: PollOutcome<unknown>,
  counts: PollCounts,
): void {
  const { metrics, logger } = runner.deps;
  const spec = target.plan.spec;
  (outcome.ok ? counts.ok : counts.error).inc();
  if (!outcome.ok) {
    const endpoint = endpointOf(spec);
    metrics.pollFailures.inc({ endpoint, code: outcome.error.code });
    // log once per burst: the first failure at warn, the rest at debug
    const level = outcome.consecutiveFailures === 1 ? "warn" : "debug";
    const failures = outcome.consecutiveFailures;
    logger[level]({ target: spec.id, code: outcome.error.code, failures, err: outcome.error }, "poll failed");
  } else if (target.failures > 0) {
    logger.info({ target: spec.id, failures: target.failures }, "poll recovered");
  }
  target.failures = outcome.ok ? 0 : outcome.consecutiveFailures;
  target.lastPollAtMs = runner.wallNowMs();
  target.lastPollDurationMs = outcome.durationMs;
  target.lastError = outcome.ok ? null : outcome.error;
  if (outcome.ok) return recordSuccess(runner, target);
  target.health = {
    kind: "failing",
    code: outcome.error.code,
    consecutiveFailures: outcome.consecutiveFailures,
    everSucceeded: target.everSucceeded,
  };
}
