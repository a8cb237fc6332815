// Runs one poll stream per target, feeds every outcome through the pure detectors and alert engine, and publishes transitions.
import { Subscription, asyncScheduler, interval, type SchedulerLike } from "rxjs";
import type { Logger } from "pino";
import type { MonitorsConfig } from "../config/types.js";
import {
  activeAlerts,
  describeTargets,
  observe,
  retainTargets,
  tick,
  type Evaluation,
  type MonitorState,
  type Observation,
} from "../domain/monitor.js";
import type { TargetHealth, TargetReadiness } from "../domain/readiness.js";
import { definitionOf, type RuleConfig } from "../domain/rules/index.js";
import type { PmError, Result } from "../domain/errors.js";
import type { PairPrice, TargetSpec } from "../domain/types.js";
import type { Transport } from "../upstream/server-rules.js";
import type { Metrics } from "../metrics.js";
import type { PragmaClient } from "../upstream/types.js";
import type { EventHub } from "./event-hub.js";
import { coalescingClock, type PollClock } from "./coalescing-clock.js";
import { poll$, type PollOutcome } from "./poll.js";
import { fedPrice, isRepeatedPrice, type FedPrice } from "./price-dedup.js";
import { createStreamFeed, type StreamFeed, type StreamSettings } from "./stream-feed.js";
import { streamHooks, stopStreamedPoll, updateStreams } from "./streamed-targets.js";
import { endpointOf, fetchTarget, planTargets, type TargetPlan } from "./targets.js";
import { canWarmUp, warmUpHistory } from "./warmup.js";
import { joinTargetReports, targetFacts, type TargetReport } from "./target-report.js";

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
  /** The SSE price stream, when configured: how `transport: stream` targets get their prices. Absent: everything polls. */
  readonly stream?: StreamSettings & {
    readonly defaultTransport: Transport;
    /** Poll period of a streamed target whose rules read components (the stream carries none). */
    readonly componentsPeriodMs: number;
  };
}

/** The running pipeline: reconfigurable without restarting unaffected targets. */
export interface MonitorRunner {
  /** Apply a (new) config: start added targets, stop removed ones, restart changed ones; rules swap in place. */
  update(monitors: MonitorsConfig, rules: readonly RuleConfig[]): void;
  /** Each running target with what its latest poll showed (the input of readiness). */
  targetHealth(): readonly TargetReadiness[];
  /** Each running target's latest poll, next poll and data (history bounded to `maxPoints`), sorted by id: work done here, never per poll. */
  targetReports(maxPoints: number): readonly TargetReport[];
  /** Current engine state (for persistence). */
  state(): MonitorState;
  /** Ids of the targets being polled. */
  targetIds(): readonly string[];
  stop(): void;
}

/** One running target (exported for streamed-targets.ts, which drives the streamed ones). */
export interface RunningTarget {
  readonly plan: TargetPlan;
  readonly subscription: Subscription;
  health: TargetHealth;
  everSucceeded: boolean;
  failures: number;
  /** The latest poll (wall clock; NaN before one): plain fields written per poll, read by targetReports only. */
  lastPollAtMs: number;
  lastPollDurationMs: number;
  lastError: PmError | null;
  /** Set for a streamed target: where its prices come from now, its poll (fallback or components), what it last fed. */
  streamed: StreamedTarget | null;
}

/** A streamed target's polls: none, the fallback (at its period) or the component poll (slower). */
export interface StreamedTarget {
  mode: "stream" | "poll";
  poll: { readonly kind: "fallback" | "components"; readonly subscription: Subscription } | null;
  lastFed: FedPrice | null;
  /** When its latest streamed price arrived (wall clock; NaN before one), for the API's `lastPoll`. */
  lastEventAtMs: number;
}

/** What the runner's steps share: its dependencies, the running targets, and the current state, rules and monitors config. */
export interface Runner {
  readonly deps: MonitorRunnerDeps;
  readonly running: Map<string, RunningTarget>;
  readonly pollClock: (slotMs: number) => PollClock;
  readonly holding: () => boolean;
  readonly wallNowMs: () => number;
  state: MonitorState;
  rules: readonly RuleConfig[];
  monitors: MonitorsConfig | undefined;
  streams: StreamFeed | null;
}

/** Start the pipeline on an initial (possibly restored) engine state. */
export function createMonitorRunner(deps: MonitorRunnerDeps, initialState: MonitorState): MonitorRunner {
  const scheduler = deps.scheduler ?? asyncScheduler;
  const runner: Runner = {
    deps,
    running: new Map(),
    pollClock: pollClocks(scheduler),
    holding: deps.holdingVerdicts ?? (() => false),
    wallNowMs: deps.wallNowMs ?? deps.nowMs,
    state: initialState,
    rules: [],
    monitors: undefined,
    streams: null,
  };
  if (deps.stream !== undefined) {
    runner.streams = createStreamFeed(deps.stream, streamHooks(runner), {
      nowMs: deps.nowMs,
      metrics: deps.metrics,
      logger: deps.logger,
      scheduler,
    });
  }
  const tickSubscription = interval(deps.tickMs ?? 1_000, scheduler).subscribe(() => {
    // right after a stall every age includes it: no time-driven verdict until the hold ends
    if (!runner.holding()) publish(runner, tick(runner.state, runner.rules, deps.nowMs()));
    // firing alerts show their current value between announcements (snapshot, subscribe, API)
    deps.hub.refreshActive(activeAlerts(runner.state));
  });
  return {
    update: (monitors, rules) => update(runner, monitors, rules),
    targetHealth: () => [...runner.running.values()].map((t) => ({ id: t.plan.spec.id, health: t.health })),
    targetReports: (maxPoints) =>
      joinTargetReports(
        [...runner.running.values()].map((t) => targetFacts(t.plan.spec, t.plan.periodMs, t, t.streamed)),
        describeTargets(runner.state, maxPoints),
        deps.nowMs(),
      ),
    state: () => runner.state,
    targetIds: () => [...runner.running.keys()],
    stop() {
      tickSubscription.unsubscribe();
      runner.streams?.stop();
      for (const target of runner.running.values()) target.subscription.unsubscribe();
      runner.running.clear();
    },
  };
}

/** Poll clocks by slot width, created on first use (the width is reloadable; a target keeps the clock it started with). */
function pollClocks(scheduler: SchedulerLike): (slotMs: number) => PollClock {
  const clocks = new Map<number, PollClock>();
  return (slotMs) => {
    let clock = clocks.get(slotMs);
    if (clock === undefined) {
      clock = coalescingClock(scheduler, slotMs);
      clocks.set(slotMs, clock);
    }
    return clock;
  };
}

/** Take an evaluation's state and publish its transitions. */
export function publish(runner: Runner, evaluation: Evaluation): void {
  runner.state = evaluation.state;
  for (const transition of evaluation.transitions) runner.deps.hub.publishAlert(transition);
}

/** Apply a (new) config: stop removed and changed targets, start added ones, retain alerts of what is left. */
function update(runner: Runner, monitors: MonitorsConfig, rules: readonly RuleConfig[]): void {
  const { deps, running } = runner;
  runner.monitors = monitors;
  runner.rules = rules;
  const plans = planTargets(monitors, deps.stream?.defaultTransport ?? "poll");
  const wanted = new Map(plans.map((plan) => [plan.spec.id, plan]));
  for (const [id, target] of running) {
    const plan = wanted.get(id);
    if (plan !== undefined && plan.key === target.plan.key) continue;
    target.subscription.unsubscribe();
    running.delete(id);
    if (plan === undefined) {
      deps.hub.forgetTarget(id);
      deps.metrics.targetLastSuccess.remove({ target: id });
    }
  }
  for (const plan of plans) if (!running.has(plan.spec.id)) startTarget(runner, plan);
  updateStreams(runner);
  const specs = plans.map((plan) => plan.spec);
  publish(runner, retainTargets(runner.state, new Set(wanted.keys()), rules, deps.nowMs(), specs));
  exportTargetCounts(deps.metrics, specs);
}

/** Targets per kind (every kind, 0 when none, so a reload that drops the last target of a kind shows 0) and both outcome series per endpoint. */
function exportTargetCounts(metrics: Metrics, specs: readonly TargetSpec[]): void {
  const perKind: Record<TargetSpec["kind"], number> = {
    offchain: 0,
    onchain: 0,
    publishers: 0,
    funding: 0,
    vault: 0,
  };
  for (const spec of specs) {
    perKind[spec.kind] += 1;
    // every endpoint polled has both outcome series from the start, so rate(...error) is 0, not absent
    for (const outcome of ["ok", "error"]) metrics.polls.inc({ endpoint: endpointOf(spec), outcome }, 0);
  }
  for (const [kind, count] of Object.entries(perKind)) metrics.targets.set({ kind }, count);
}

/** Start one target: its polls, or its place on the stream (and warm its history up when a windowed rule needs it). */
function startTarget(runner: Runner, plan: TargetPlan): void {
  const target: RunningTarget = {
    plan,
    subscription: new Subscription(),
    health: { kind: "waiting" },
    everSucceeded: false,
    failures: 0,
    lastPollAtMs: Number.NaN,
    lastPollDurationMs: 0,
    lastError: null,
    streamed:
      plan.transport === "stream" && runner.streams !== null
        ? { mode: "stream", poll: null, lastFed: null, lastEventAtMs: Number.NaN }
        : null,
  };
  runner.running.set(plan.spec.id, target);
  warmUp(runner, target);
  if (target.streamed === null) target.subscription.add(startPoll(runner, target, plan.periodMs));
  else target.subscription.add(() => stopStreamedPoll(target));
}

/** Poll a target every `periodMs`, each outcome fed through onOutcome. */
export function startPoll(runner: Runner, target: RunningTarget, periodMs: number): Subscription {
  const { deps, monitors } = runner;
  const plan = target.plan;
  const poll = poll$((signal) => fetchTarget(deps.client, plan.spec, signal, deps.nowMs()), {
    periodMs,
    jitter: monitors?.jitter ?? 0,
    spreadMs: monitors?.spreadMs ?? 10_000,
    maxBackoffMs: Math.max(periodMs, monitors?.maxBackoffMs ?? 60_000),
    timeoutMs: deps.pollTimeoutMs,
    random: deps.random,
    // coalescing never moves a poll by more than 5 % of its period
    scheduler: runner.pollClock(Math.min(monitors?.coalesceMs ?? 0, Math.floor(periodMs / 10))),
  });
  return poll.subscribe((outcome) => onOutcome(runner, target, outcome));
}

/** Fill an off-chain target's history from candles when warm-up is on and a rule keeps history for it. */
function warmUp(runner: Runner, target: RunningTarget): void {
  const { deps } = runner;
  const spec = target.plan.spec;
  const warmup = runner.monitors?.warmup;
  if (spec.kind !== "offchain" || !canWarmUp(spec) || warmup?.enabled !== true) return;
  if (!runner.rules.some((rule) => definitionOf(rule).historyMs(rule, spec) > 0)) return;
  const warm = warmUpHistory(deps.client, spec, warmup.interval, warmup.lookbackMs, deps.nowMs())
    .then((points) => {
      if (points.length > 0 && runner.running.get(spec.id) === target)
        publish(
          runner,
          observe(runner.state, { kind: "history", target: spec, points }, runner.rules, deps.nowMs()),
        );
    })
    .catch((error: unknown) =>
      deps.logger.warn({ target: spec.id, err: error }, "price history warm-up failed"),
    );
  target.subscription.add(() => void warm);
}

/** One poll outcome: metrics, logs and health, then the domain (unless a failure overlapped the daemon's own stall). */
function onOutcome(runner: Runner, target: RunningTarget, outcome: PollOutcome<unknown>): void {
  const held = runner.holding();
  recordOutcome(runner, target, outcome);
  // a failure while verdicts are held overlapped the daemon's own stall (a timeout, most likely): not counted
  if (held && !outcome.ok) return;
  feed(runner, target, outcome);
}

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

/** The outcome in metrics, logs (once per failure burst at warn) and the target's health. */
function recordOutcome(runner: Runner, target: RunningTarget, outcome: PollOutcome<unknown>): void {
  const { metrics, logger } = runner.deps;
  const spec = target.plan.spec;
  const endpoint = endpointOf(spec);
  metrics.polls.inc({ endpoint, outcome: outcome.ok ? "ok" : "error" });
  if (!outcome.ok) {
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
function toObservation(spec: TargetSpec, outcome: Result<unknown>, observedAtMs: number): Observation {
  const result = outcome.ok
    ? { ok: true as const, value: outcome.value }
    : { ok: false as const, error: outcome.error };
  // the value's type follows from the spec kind: fetchTarget returns the matching snapshot
  return { kind: spec.kind, target: spec, result, observedAtMs } as Observation;
}
