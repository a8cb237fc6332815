// A target's transport (its own polls, or its place on the stream), started, stopped and switched in place on a
// reload, so a switch keeps the target's health, failure count and last fed price (no re-announce, no price twice).
import type { MonitorsConfig } from "../config/types.js";
import type { MonitorRunnerDeps, Runner, RunningTarget } from "./runner.js";
import { stopStreamedPoll, syncPoll } from "./streamed-targets.js";
import type { TargetPlan } from "./targets.js";
import { startPoll } from "./target-poll.js";

/** Start what the target's plan asks for: the stream (when the runner has one), else its polls at its period. */
export function startTransport(runner: Runner, target: RunningTarget): void {
  if (target.plan.transport === "stream" && runner.streams !== null) {
    target.streamed = { mode: "stream", poll: null, lastEventAtMs: Number.NaN };
    return;
  }
  target.streamed = null;
  target.poll = startPoll(runner, target, target.plan.periodMs);
}

/** Stop every poll of the target (its own, or a streamed target's fallback or component poll). */
export function stopTransport(target: RunningTarget): void {
  target.poll?.unsubscribe();
  target.poll = null;
  stopStreamedPoll(target);
}

/** Where a target's prices come from: "stream" while it has a place on the stream, else "poll". */
export function transportOf(target: RunningTarget): "stream" | "poll" {
  return target.streamed === null ? "poll" : "stream";
}

/**
 * Switch a running target to `plan` (the same target, only its transport differs): stop its polls, start the
 * new transport. Its alert state lives in the monitor under its id and is untouched; the stream feed learns of
 * the change at the end of the update (updateStreams).
 */
export function switchTransport(runner: Runner, target: RunningTarget, plan: TargetPlan): void {
  const from = transportOf(target);
  stopTransport(target);
  target.streamed = null;
  target.plan = plan;
  startTransport(runner, target);
  const to = transportOf(target);
  if (from !== to) runner.deps.logger.info({ target: plan.spec.id, from, to }, "transport switched");
}

/**
 * New stream settings (a reload of `upstream.transport` or `upstream.stream`): the feed reopens its connections
 * with them (each target keeps its stream/poll mode), and component polls restart when their period changed.
 * The transport default takes effect on the next update, which re-plans the targets.
 */
export function reconfigureStream(runner: Runner, next: NonNullable<MonitorRunnerDeps["stream"]>): void {
  const previous = runner.stream;
  runner.stream = next;
  runner.streams?.reconfigure(next);
  if (previous?.componentsPeriodMs === next.componentsPeriodMs) return;
  for (const target of runner.running.values()) {
    if (target.streamed?.poll?.kind !== "components") continue;
    stopStreamedPoll(target);
    syncPoll(runner, target);
  }
}

/**
 * The `monitors` settings a running poll keeps from its start (its grid, jitter and backoff cap): a reload that
 * changes them restarts the polls (restartPolls). `spreadMs` places first polls only, so it takes effect as polls start.
 */
export function pollSettingsKey(monitors: MonitorsConfig | undefined): string {
  return JSON.stringify([monitors?.coalesceMs, monitors?.jitter, monitors?.maxBackoffMs]);
}

/**
 * Restart the target's polls under the runner's current poll settings (its own, or a streamed target's fallback or
 * component poll); its health, failure count and last fed price stay, as in a transport switch.
 */
export function restartPolls(runner: Runner, target: RunningTarget): void {
  if (target.poll !== null) {
    target.poll.unsubscribe();
    target.poll = startPoll(runner, target, target.plan.periodMs);
  }
  if (target.streamed?.poll != null) {
    stopStreamedPoll(target);
    syncPoll(runner, target);
  }
}
