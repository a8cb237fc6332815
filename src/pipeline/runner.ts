// What the runner's modules share: its dependencies, its running targets and state, and how a step's result is published.
import type { Subscription, SchedulerLike } from "rxjs";
import type { Logger } from "pino";
import type { MonitorsConfig } from "../config/types.js";
import type { Evaluation, MonitorState } from "../domain/monitor.js";
import type { TargetHealth } from "../domain/readiness.js";
import type { RuleConfig } from "../domain/rules/index.js";
import type { TargetSpec } from "../domain/types.js";
import type { PmError } from "../domain/errors.js";
import type { GaugeChild } from "../metric-children.js";
import type { Metrics } from "../metrics.js";
import type { PragmaClient } from "../upstream/types.js";
import type { Recorder } from "../record/recorder.js";
import type { Transport } from "../upstream/server-rules.js";
import type { EventHub } from "./event-hub.js";
import type { PollClock } from "./coalescing-clock.js";
import type { FedPrice } from "./price-dedup.js";
import type { StreamFeed, StreamSettings } from "./stream-feed.js";
import type { LatestPrice } from "./target-feed.js";
import type { TargetPlan } from "./targets.js";
import type { TaskGate } from "./warmup.js";

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
  /** The recording of what the upstream said (the `recording` config block or `pragma-monitor record`). */
  readonly recorder?: Recorder;
  /** The SSE price stream, when configured: how `transport: stream` targets get their prices. Absent: everything polls. */
  readonly stream?: StreamSettings & {
    readonly defaultTransport: Transport;
    /** Poll period of a streamed target whose rules read components (the stream carries none). */
    readonly componentsPeriodMs: number;
  };
}

/** One running target: its plan, its subscriptions, what its latest poll showed. */
export interface RunningTarget {
  /** Replaced in place when only its transport changes on a reload (transport-switch.ts). */
  plan: TargetPlan;
  readonly subscription: Subscription;
  /** Its own polls while it is not streamed (null while streamed: the stream decides its polls). */
  poll: Subscription | null;
  /** What was last fed to the monitor (off-chain prices): kept across a transport switch so no price counts twice. */
  lastFed: FedPrice | null;
  health: TargetHealth;
  everSucceeded: boolean;
  failures: number;
  /** The latest poll (wall clock; NaN before one): plain fields written per poll, read by targetReports only. */
  lastPollAtMs: number;
  lastPollDurationMs: number;
  lastError: PmError | null;
  /** Its `target_last_success` series, bound once. */
  readonly lastSuccess: GaugeChild;
  /** Set for a streamed target: where its prices come from now, its poll (fallback or components). */
  streamed: StreamedTarget | null;
  /** Its latest price tick's record (null before its first price), rewritten by each price fed. */
  latestPrice: LatestPrice | null;
}

/** A streamed target's polls: none, the fallback (at its period) or the component poll (slower). */
export interface StreamedTarget {
  mode: "stream" | "poll";
  poll: { readonly kind: "fallback" | "components"; readonly subscription: Subscription } | null;
  /** When its latest streamed price arrived (wall clock; NaN before one), for the API's `lastPoll`. */
  lastEventAtMs: number;
}

/** What the runner's steps share: its dependencies, the running targets, and the current state, rules, monitors config and stream settings. */
export interface Runner {
  readonly deps: MonitorRunnerDeps;
  readonly running: Map<string, RunningTarget>;
  readonly pollClock: (slotMs: number) => PollClock;
  readonly holding: () => boolean;
  readonly wallNowMs: () => number;
  state: MonitorState;
  /** The rules of the configuration in force. */
  rules: readonly RuleConfig[];
  monitors: MonitorsConfig | undefined;
  streams: StreamFeed | null;
  /** The stream settings in force (`deps.stream` at start, replaced by a reload of `upstream.transport` or `upstream.stream`). */
  stream: MonitorRunnerDeps["stream"];
  /** Which of the configured targets this daemon runs (all but in cluster mode, where a member runs the ones it owns). */
  owns: (spec: TargetSpec) => boolean;
  /**
   * Targets started now are taken over from another cluster member (this member already runs some: a dead or
   * leaving member's keys, a rebalance's, a cluster reload's new ones): their first poll starts at once (their later
   * ones still spread over the period), so a dead member's targets are polled again within a period of its lease's end.
   */
  takingOver: boolean;
  /** History warm-ups wait here, so they never hold every upstream connection while targets wait to be polled. */
  readonly warmups: TaskGate;
  /**
   * What history warm-ups wait for: each started target until its first data (a poll outcome or a streamed price),
   * and a target taken over from another cluster member until one period after its start too (the other members
   * take theirs at the same instant: their first polls must not queue behind this one's candle requests upstream).
   */
  readonly warmupHolds: Set<object>;
  /** Warm-ups waiting for `warmupHolds` to empty. */
  readonly afterHolds: (() => void)[];
  /** Targets whose first data did not come within the hold's bound (logged when the warm-ups go ahead). */
  readonly warmupLaggards: string[];
}

/** A warm-up hold ends (a target's first data is in, its period after a takeover passed, or it stopped). */
export function releaseWarmupHold(runner: Runner, hold: object): void {
  if (!runner.warmupHolds.delete(hold) || runner.warmupHolds.size > 0) return;
  const laggards = runner.warmupLaggards.splice(0);
  if (laggards.length > 0 && runner.afterHolds.length > 0)
    runner.deps.logger.info(
      { targets: laggards.length, first: laggards.slice(0, 10) },
      "price history warm-ups go ahead without the first data of some targets (none within a period and a poll timeout)",
    );
  for (const release of runner.afterHolds.splice(0)) release();
}

/** The hold on `target`'s first data ends unreleased: it has been held a period and a poll timeout. */
export function expireWarmupHold(runner: Runner, target: RunningTarget): void {
  if (!runner.warmupHolds.has(target)) return;
  runner.warmupLaggards.push(target.plan.spec.id);
  releaseWarmupHold(runner, target);
}

/** Resolves once no warm-up hold is left (at once when none is). */
export function warmupHoldsEnded(runner: Runner): Promise<void> {
  if (runner.warmupHolds.size === 0) return Promise.resolve();
  return new Promise((resolve) => runner.afterHolds.push(resolve));
}

/** Take an evaluation's state and publish its transitions. */
export function publish(runner: Runner, evaluation: Evaluation): void {
  runner.state = evaluation.state;
  for (const transition of evaluation.transitions) runner.deps.hub.publishAlert(transition);
}
