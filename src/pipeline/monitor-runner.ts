// Runs one poll stream per target, feeds every outcome through the pure detectors and alert engine, and publishes transitions.
import { Subscription, asyncScheduler, interval, type SchedulerLike } from "rxjs";
import type { Logger } from "pino";
import type { MonitorsConfig } from "../config/types.js";
import type { AlertPayload } from "../domain/events.js";
import {
  activeAlerts,
  observe,
  retainTargets,
  tick,
  type Evaluation,
  type MonitorState,
  type Observation,
} from "../domain/monitor.js";
import type { TargetHealth, TargetReadiness } from "../domain/readiness.js";
import type { RuleConfig } from "../domain/rules/index.js";
import type { TargetKind, TargetSpec } from "../domain/types.js";
import type { Metrics } from "../metrics.js";
import type { PragmaClient } from "../upstream/types.js";
import type { EventHub } from "./event-hub.js";
import { coalescingClock, type PollClock } from "./coalescing-clock.js";
import { poll$, type PollOutcome } from "./poll.js";
import { endpointOf, fetchTarget, planTargets, type TargetPlan } from "./targets.js";
import { canWarmUp, warmUpHistory } from "./warmup.js";

/** What the runner needs from the outside world; time and randomness are injected. */
export interface MonitorRunnerDeps {
  readonly client: PragmaClient;
  readonly hub: EventHub;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly nowMs: () => number;
  readonly random: () => number;
  /** Whole-poll deadline (covers the client's retries). */
  readonly pollTimeoutMs: number;
  /** How often time-driven alert work (pending → firing, reminders) runs. */
  readonly tickMs?: number;
  readonly scheduler?: SchedulerLike;
  /**
   * True while the daemon's own stall holds verdicts (src/domain/loop-stall.ts): ticks are skipped and failed
   * polls are not counted, so a stall is never blamed on the upstream. Absent = never held.
   */
  readonly holdingVerdicts?: () => boolean;
  /** Wall clock for the last-success metric (the market clock may run faster with a fast simulator). */
  readonly wallNowMs?: () => number;
}

/** The running pipeline: reconfigurable without restarting unaffected targets. */
export interface MonitorRunner {
  /** Apply a (new) config: start added targets, stop removed ones, restart changed ones; rules swap in place. */
  update(monitors: MonitorsConfig, rules: readonly RuleConfig[]): void;
  /** Each running target with what its latest poll showed (the input of readiness). */
  targetHealth(): readonly TargetReadiness[];
  /** Current engine state (for persistence). */
  state(): MonitorState;
  /** Ids of the targets being polled. */
  targetIds(): readonly string[];
  stop(): void;
}

interface RunningTarget {
  readonly plan: TargetPlan;
  readonly subscription: Subscription;
  health: TargetHealth;
  everSucceeded: boolean;
  failures: number;
}

/** Start the pipeline on an initial (possibly restored) engine state. */
export function createMonitorRunner(deps: MonitorRunnerDeps, initialState: MonitorState): MonitorRunner {
  const { hub, metrics, logger, nowMs } = deps;
  const scheduler = deps.scheduler ?? asyncScheduler;
  const running = new Map<string, RunningTarget>();
  /** Poll clocks by slot width (the width is reloadable; a target keeps the clock it started with). */
  const pollClocks = new Map<number, PollClock>();
  const pollClock = (slotMs: number): PollClock => {
    let clock = pollClocks.get(slotMs);
    if (clock === undefined) {
      clock = coalescingClock(scheduler, slotMs);
      pollClocks.set(slotMs, clock);
    }
    return clock;
  };
  const wallNowMs = deps.wallNowMs ?? nowMs;
  let state = initialState;
  let rules: readonly RuleConfig[] = [];
  let monitors: MonitorsConfig | undefined;

  const publish = (evaluation: Evaluation): void => {
    state = evaluation.state;
    for (const transition of evaluation.transitions) publishTransition(transition);
  };
  const publishTransition = (alert: AlertPayload): void => {
    hub.publishAlert(alert);
  };

  const holding = deps.holdingVerdicts ?? (() => false);

  const onOutcome = (target: RunningTarget, outcome: PollOutcome<unknown>): void => {
    const held = holding();
    const spec = target.plan.spec;
    const endpoint = endpointOf(spec);
    metrics.polls.inc({ endpoint, outcome: outcome.ok ? "ok" : "error" });
    if (!outcome.ok) {
      metrics.pollFailures.inc({ endpoint, code: outcome.error.code });
      // log once per burst: the first failure at warn, the rest at debug
      const level = outcome.consecutiveFailures === 1 ? "warn" : "debug";
      logger[level](
        {
          target: spec.id,
          code: outcome.error.code,
          failures: outcome.consecutiveFailures,
          err: outcome.error,
        },
        "poll failed",
      );
    } else if (target.failures > 0) {
      logger.info({ target: spec.id, failures: target.failures }, "poll recovered");
    }
    target.failures = outcome.ok ? 0 : outcome.consecutiveFailures;
    if (outcome.ok) {
      target.everSucceeded = true;
      target.health = { kind: "ok" };
      metrics.targetLastSuccess.set({ target: spec.id }, wallNowMs() / 1000);
    } else {
      target.health = {
        kind: "failing",
        code: outcome.error.code,
        consecutiveFailures: outcome.consecutiveFailures,
        everSucceeded: target.everSucceeded,
      };
    }
    // a failure while verdicts are held overlapped the daemon's own stall (a timeout, most likely): not counted
    if (held && !outcome.ok) return;
    const observedAtMs = nowMs();
    const observation = toObservation(spec, outcome, observedAtMs);
    publish(observe(state, observation, rules, observedAtMs));
    publishPriceTick(observation);
  };

  const publishPriceTick = (observation: Observation): void => {
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
  };

  const startTarget = (plan: TargetPlan): void => {
    const target: RunningTarget = {
      plan,
      subscription: new Subscription(),
      health: { kind: "waiting" },
      everSucceeded: false,
      failures: 0,
    };
    const poll = poll$((signal) => fetchTarget(deps.client, plan.spec, signal, nowMs()), {
      periodMs: plan.periodMs,
      jitter: monitors?.jitter ?? 0,
      spreadMs: monitors?.spreadMs ?? 10_000,
      maxBackoffMs: Math.max(plan.periodMs, monitors?.maxBackoffMs ?? 60_000),
      timeoutMs: deps.pollTimeoutMs,
      random: deps.random,
      // coalescing never moves a poll by more than 5 % of its period
      scheduler: pollClock(Math.min(monitors?.coalesceMs ?? 0, Math.floor(plan.periodMs / 10))),
    });
    const { subscription } = target;
    running.set(plan.spec.id, target);
    const warmup = monitors?.warmup;
    if (
      plan.spec.kind === "offchain" &&
      canWarmUp(plan.spec) &&
      warmup?.enabled === true &&
      rules.some((r) => r.kind === "price_change")
    ) {
      const spec = plan.spec;
      const warm = warmUpHistory(deps.client, spec, warmup.interval, warmup.lookbackMs, nowMs())
        .then((points) => {
          if (points.length > 0 && running.get(spec.id) === target) {
            publish(observe(state, { kind: "history", target: spec, points }, rules, nowMs()));
          }
        })
        .catch((error: unknown) =>
          logger.warn({ target: spec.id, err: error }, "price history warm-up failed"),
        );
      subscription.add(() => void warm);
    }
    subscription.add(poll.subscribe((outcome) => onOutcome(target, outcome)));
  };

  const tickSubscription = interval(deps.tickMs ?? 1_000, scheduler).subscribe(() => {
    // right after a stall every age includes it: no time-driven verdict until the hold ends
    if (!holding()) publish(tick(state, rules, nowMs()));
    // firing alerts show their current value between announcements (snapshot, subscribe, API)
    hub.refreshActive(activeAlerts(state));
  });

  return {
    update(nextMonitors, nextRules) {
      monitors = nextMonitors;
      rules = nextRules;
      const plans = planTargets(nextMonitors);
      const wanted = new Map(plans.map((plan) => [plan.spec.id, plan]));
      for (const [id, target] of running) {
        const plan = wanted.get(id);
        if (plan === undefined || plan.key !== target.plan.key) {
          target.subscription.unsubscribe();
          running.delete(id);
          if (plan === undefined) {
            hub.forgetTarget(id);
            metrics.targetLastSuccess.remove({ target: id });
          }
        }
      }
      for (const plan of plans) if (!running.has(plan.spec.id)) startTarget(plan);
      publish(
        retainTargets(
          state,
          new Set(wanted.keys()),
          rules,
          nowMs(),
          plans.map((plan) => plan.spec),
        ),
      );
      // every kind is exported (0 when none), so a reload that drops the last target of a kind shows 0
      const perKind: Record<TargetKind, number> = {
        offchain: 0,
        onchain: 0,
        publishers: 0,
        funding: 0,
        vault: 0,
      };
      for (const plan of plans) {
        perKind[plan.spec.kind] += 1;
        // every endpoint polled has both outcome series from the start, so rate(...error) is 0, not absent
        for (const outcome of ["ok", "error"])
          metrics.polls.inc({ endpoint: endpointOf(plan.spec), outcome }, 0);
      }
      for (const [kind, count] of Object.entries(perKind)) metrics.targets.set({ kind }, count);
    },
    targetHealth: () => [...running.values()].map((t) => ({ id: t.plan.spec.id, health: t.health })),
    state: () => state,
    targetIds: () => [...running.keys()],
    stop() {
      tickSubscription.unsubscribe();
      for (const target of running.values()) target.subscription.unsubscribe();
      running.clear();
    },
  };
}

/** Wrap a poll outcome as the domain observation of its target kind. */
function toObservation(spec: TargetSpec, outcome: PollOutcome<unknown>, observedAtMs: number): Observation {
  const result = outcome.ok
    ? { ok: true as const, value: outcome.value }
    : { ok: false as const, error: outcome.error };
  // the value's type follows from the spec kind: fetchTarget returns the matching snapshot
  return { kind: spec.kind, target: spec, result, observedAtMs } as Observation;
}
