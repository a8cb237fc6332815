// The pipeline of every target: starts and stops targets on config updates (polled, or fed by the stream), ticks the alert engine, reports targets.
import { Subscription, asyncScheduler, interval } from "rxjs";
import type { MonitorsConfig } from "../config/types.js";
import {
  activeAlerts,
  adoptAlertState,
  describeTargets,
  historyReachesBack,
  observe,
  releaseAlertState,
  retainTargets,
  setClusterCauses,
  targetRulesOf,
  tick,
  type MonitorState,
  type PersistedAlertState,
} from "../domain/monitor.js";
import type { PricePoint } from "../domain/price-history.js";
import type { TargetReadiness } from "../domain/readiness.js";
import { NO_PEERS, type PeerCauses } from "../domain/cause-summary.js";
import type { RuleConfig } from "../domain/rules/index.js";
import type { TargetSpec } from "../domain/types.js";
import type { Metrics } from "../metrics.js";
import { coalescingClock, timerClock, type PollClock } from "./coalescing-clock.js";
import {
  expireWarmupHold,
  publish,
  releaseWarmupHold,
  type MonitorRunnerDeps,
  type Runner,
  type RunningTarget,
  warmupHoldsEnded,
} from "./runner.js";
import { createStreamFeed } from "./stream-feed.js";
import { streamHooks, updateStreams } from "./streamed-targets.js";
import { endpointOf, planTargets, type TargetPlan } from "./targets.js";
import {
  pollSettingsKey,
  reconfigureStream,
  restartPolls,
  startTransport,
  stopTransport,
  switchTransport,
} from "./transport-switch.js";
import { joinTargetReports, targetFacts, type TargetReport } from "./target-report.js";
import { taskGate, warmUpHistory, warmupSkip, WARMUP_CONCURRENCY, type WarmupPoint } from "./warmup.js";

export type { MonitorRunnerDeps } from "./runner.js";

/** The running pipeline: reconfigurable without restarting unaffected targets. */
export interface MonitorRunner {
  /** Apply a (new) config: start added targets, stop removed ones, restart changed ones, switch a changed transport in place; rules swap in place. */
  update(monitors: MonitorsConfig, rules: readonly RuleConfig[]): void;
  /**
   * Run only the configured targets `owns` accepts, and judge the cause rules only when `runsCauses` (cluster
   * ownership; else only link children to the parents firing in the cluster's log); re-applies the current config at once.
   */
  restrict(owns: (spec: TargetSpec) => boolean, runsCauses: boolean): void;
  /**
   * Cluster mode: what the cause rules read from now on besides this engine (the peers' summaries, the parents firing
   * in the log); judged only once restricted with runsCauses and the peers are `ready`.
   */
  clusterCauses(peers: PeerCauses, firing: ReadonlySet<string>, ready: boolean): void;
  /** New stream settings (reload): connections reopen with them; the transport default applies at the next `update`. */
  reconfigureStream(stream: NonNullable<MonitorRunnerDeps["stream"]>): void;
  /** Each running target with what its latest poll showed (the input of readiness). */
  targetHealth(): readonly TargetReadiness[];
  /** Each running target's latest poll, next poll and data (history bounded to `maxPoints`), sorted by id: work done here, never per poll. */
  targetReports(maxPoints: number): readonly TargetReport[];
  /** Take over alerts another cluster member kept (before the targets they belong to start): announced nothing. */
  adopt(persisted: PersistedAlertState): void;
  /** Seed a running target's history with points another cluster member held (before its first poll is evaluated). */
  seedHistory(targetId: string, points: readonly PricePoint[]): void;
  /** Let alerts go without a transition (their targets move to another cluster member, which carries them on). */
  release(fingerprints: readonly string[]): void;
  /** Current engine state (for persistence). */
  state(): MonitorState;
  /** Ids of the targets being polled. */
  targetIds(): readonly string[];
  stop(): void;
}

/** Start the pipeline on an initial (possibly restored) engine state. */
export function createMonitorRunner(deps: MonitorRunnerDeps, initialState: MonitorState): MonitorRunner {
  const scheduler = deps.scheduler ?? asyncScheduler;
  const runner: Runner = {
    deps,
    running: new Map(),
    // the daemon's poll clocks run on Node's timers (tests inject a scheduler)
    pollClock: pollClocks(deps.scheduler ?? timerClock),
    holding: deps.holdingVerdicts ?? (() => false),
    wallNowMs: deps.wallNowMs ?? deps.nowMs,
    state: initialState,
    rules: [],
    monitors: undefined,
    streams: null,
    stream: deps.stream,
    owns: () => true,
    takingOver: false,
    warmups: taskGate(WARMUP_CONCURRENCY),
    warmupHolds: new Set(),
    afterHolds: [],
    warmupLaggards: [],
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
    restrict: (owns, runsCauses) => restrict(runner, owns, runsCauses),
    clusterCauses(peers, firing, ready) {
      const judges = runner.state.cluster?.judges ?? false;
      setClusterCauses(runner.state, { judges, ready, peers, firing });
    },
    reconfigureStream: (stream) => reconfigureStream(runner, stream),
    targetHealth: () => [...runner.running.values()].map((t) => ({ id: t.plan.spec.id, health: t.health })),
    targetReports: (maxPoints) =>
      joinTargetReports(
        [...runner.running.values()].map((t) => targetFacts(t.plan.spec, t.plan.periodMs, t, t.streamed)),
        describeTargets(runner.state, maxPoints),
        deps.nowMs(),
      ),
    adopt(persisted) {
      deps.hub.restoreActive(adoptAlertState(runner.state, persisted));
    },
    seedHistory(targetId, points) {
      const target = runner.running.get(targetId);
      if (target === undefined || points.length === 0) return;
      const observation = {
        kind: "history" as const,
        target: target.plan.spec,
        points,
        source: "handover" as const,
      };
      publish(runner, observe(runner.state, observation, runner.rules, deps.nowMs()));
    },
    release(fingerprints) {
      releaseAlertState(runner.state, fingerprints);
      deps.hub.releaseActive(fingerprints);
    },
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

/** Run the owned targets only, judge the cause rules or only link to them (cluster mode), and re-apply the config. */
function restrict(runner: Runner, owns: (spec: TargetSpec) => boolean, runsCauses: boolean): void {
  runner.owns = owns;
  const { cluster } = runner.state;
  setClusterCauses(runner.state, {
    judges: runsCauses,
    ready: cluster?.ready ?? false,
    peers: cluster?.peers ?? NO_PEERS,
    firing: cluster?.firing ?? new Set(),
  });
  runner.takingOver = runner.running.size > 0;
  if (runner.monitors !== undefined) update(runner, runner.monitors, runner.rules);
  runner.takingOver = false;
}

/** Poll clocks by slot width, created on first use (the width is reloadable; a target keeps the clock it started with). */
function pollClocks(base: PollClock): (slotMs: number) => PollClock {
  const clocks = new Map<number, PollClock>();
  return (slotMs) => {
    let clock = clocks.get(slotMs);
    if (clock === undefined) {
      clock = coalescingClock(base, slotMs);
      clocks.set(slotMs, clock);
    }
    return clock;
  };
}

/**
 * Apply a (new) config: stop removed and changed targets, start added ones, restart the polls of the others when the
 * poll settings changed, retain alerts of what is left.
 */
function update(runner: Runner, monitors: MonitorsConfig, rules: readonly RuleConfig[]): void {
  const { deps, running } = runner;
  const pollsChanged = pollSettingsKey(runner.monitors) !== pollSettingsKey(monitors);
  runner.monitors = monitors;
  runner.rules = rules;
  const plans = planTargets(monitors, runner.stream?.defaultTransport ?? "poll").filter((plan) =>
    runner.owns(plan.spec),
  );
  const wanted = new Map(plans.map((plan) => [plan.spec.id, plan]));
  for (const [id, target] of running) {
    const plan = wanted.get(id);
    if (plan !== undefined && plan.key === target.plan.key) {
      if (plan.transport !== target.plan.transport) switchTransport(runner, target, plan);
      else if (pollsChanged) restartPolls(runner, target);
      continue;
    }
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
  publish(runner, retainTargets(runner.state, new Set(wanted.keys()), runner.rules, deps.nowMs(), specs));
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
    lastSuccess: runner.deps.metrics.targetLastSuccess.childFor({ target: plan.spec.id }),
    poll: null,
    lastFed: null,
    streamed: null,
    latestPrice: null,
  };
  runner.running.set(plan.spec.id, target);
  holdWarmups(runner, target);
  warmUp(runner, target);
  startTransport(runner, target);
  target.subscription.add(() => stopTransport(target));
}

/**
 * How long a target's first poll may take to have its outcome: a period (moved by up to 5 % by timer coalescing,
 * target-poll.ts) and a poll timeout.
 */
function firstOutcomeMs(runner: Runner, periodMs: number): number {
  return Math.ceil(periodMs * 1.05) + runner.deps.pollTimeoutMs;
}

/**
 * Hold the warm-ups until the target's first data, at most until its first poll has its outcome (a target still
 * without data then, a stream that never delivers say, is a laggard the others' warm-ups do not wait for), and a
 * target taken over until a period after its start too.
 */
function holdWarmups(runner: Runner, target: RunningTarget): void {
  const hold = (token: object): void => {
    runner.warmupHolds.add(token);
    target.subscription.add(() => releaseWarmupHold(runner, token));
  };
  const { periodMs } = target.plan;
  const clock = runner.pollClock(0);
  hold(target);
  const boundMs = firstOutcomeMs(runner, periodMs);
  target.subscription.add(clock.schedule(() => expireWarmupHold(runner, target), boundMs));
  if (!runner.takingOver) return;
  const period = {};
  hold(period);
  target.subscription.add(clock.schedule(() => releaseWarmupHold(runner, period), periodMs));
}

/**
 * Fill an off-chain target's history from candles when warm-up is on and a window of its rules is longer than the
 * time between the closes its history keeps (warmupSkip; else it starts as a perp target does, with an empty history its own data fills).
 */
function warmUp(runner: Runner, target: RunningTarget): void {
  const { deps } = runner;
  const spec = target.plan.spec;
  const warmup = runner.monitors?.warmup;
  if (spec.kind !== "offchain" || warmup?.enabled !== true) return;
  if (warmupSkip(spec, targetRulesOf(runner.state, runner.rules, spec), warmup.interval) !== null) return;
  const asOfMs = deps.nowMs();
  // no first poll waits behind candle requests (10 000 candles a body, slow to serve and to decode): a warm-up
  // starts once no hold is left (holdWarmups); a target stopped meanwhile fetches nothing, nor one whose history
  // already reaches back far enough (seeded by a cluster handover meanwhile: candles would all be dropped)
  const fetch = (): Promise<WarmupPoint[]> =>
    runner.warmups.run(async () => {
      await warmupHoldsEnded(runner);
      const needed =
        runner.running.get(spec.id) === target &&
        !historyReachesBack(
          runner.state,
          spec.id,
          deps.nowMs(),
          warmup.lookbackMs,
          firstOutcomeMs(runner, target.plan.periodMs),
        );
      return needed ? warmUpHistory(deps.client, spec, warmup.interval, warmup.lookbackMs, asOfMs) : [];
    });
  const warm = (deps.recorder === undefined ? fetch() : deps.recorder.within(spec.id, "warmup", fetch))
    .then((points) => {
      if (points.length === 0 || runner.running.get(spec.id) !== target) return;
      deps.recorder?.warmedUp(spec.id, warmup.interval, warmup.lookbackMs, asOfMs);
      publish(
        runner,
        observe(
          runner.state,
          { kind: "history", target: spec, points, source: "candles" },
          runner.rules,
          deps.nowMs(),
        ),
      );
    })
    .catch((error: unknown) =>
      deps.logger.warn({ target: spec.id, err: error }, "price history warm-up failed"),
    );
  target.subscription.add(() => void warm);
}
