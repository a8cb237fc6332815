// What each configured chat-ops sink would have sent: the daemon's own feed (routing, silence and cause muting),
// its grouping scheduler and token bucket, in virtual time, nothing delivered.
import type { AlertSinkConfig, SinkConfig } from "../config/types.js";
import type { AlertEvent } from "../domain/events.js";
import { CHATOPS_DEFAULT_POLICY } from "../sinks/chatops/chatops.js";
import { forgetAlert, type GroupEntry, type GroupNotification } from "../sinks/chatops/group-schedule.js";
import { routeAlert } from "../sinks/chatops/route.js";
import { dispatchTo } from "../sinks/chatops/sink-feed.js";
import {
  decideNext,
  groupPolicyOf,
  initialSchedule,
  settleAttempt,
  type SchedulePolicy,
  type ScheduleState,
} from "../sinks/chatops/sink-schedule.js";
import { createTokenBucket, type TokenBucket } from "../token-bucket.js";

/** What one sink would have received. */
export interface SinkTally {
  readonly name: string;
  readonly kind: string;
  /** Messages sent (one per group notification, repeats included). */
  readonly notifications: number;
  /** Alert transitions those messages carried. */
  readonly alerts: number;
  /** Notifications that only repeated a group still firing (`repeatIntervalMs`). */
  readonly repeats: number;
  /** Transitions routed to the sink but muted (a maintenance window, or a firing cause alert). */
  readonly silenced: number;
  /** Transitions its filters (rules, pairs, severity, labels, send-resolved) kept from it. */
  readonly filtered: number;
  /** Each message: when it was sent, its group and the fingerprints and statuses it listed. */
  readonly messages: readonly SimulatedMessage[];
}

/** One message a sink would have sent. */
export interface SimulatedMessage {
  readonly atMs: number;
  /** The group key (`{}` for `groupBy: []`, the fingerprint with grouping off, "" for Alertmanager's batch). */
  readonly group: string;
  readonly repeat: boolean;
  /** Every alert the notification listed, with its status. */
  readonly alerts: readonly { readonly fingerprint: string; readonly status: string }[];
  /** Seqs of the transitions it delivered. */
  readonly seqs: readonly number[];
}

/** A simulated sink: fed the bus's alert events, advanced in virtual time. */
export interface SimulatedSink {
  offer(event: AlertEvent, nowMs: number): void;
  /** Run every decision due up to `nowMs` (group waits, intervals, repeats, sends that waited for a token). */
  advance(nowMs: number): void;
  /** Send what is still pending (the end of the replay: what the outbox would still send); repeats stop. */
  drain(): void;
  tally(): SinkTally;
}

interface Entry extends GroupEntry {
  readonly attempts: number;
}

/**
 * The alert sinks of a config (heartbeats send no alerts), each simulated. `speed` is recorded time per unit
 * of the sinks' own clock (a simulator faster than real time); the sinks' timers run on their own clock.
 */
export function simulateSinks(sinks: readonly SinkConfig[], startMs: number, speed = 1): SimulatedSink[] {
  return sinks
    .filter((sink): sink is AlertSinkConfig => sink.kind !== "heartbeat" && sink.enabled)
    .map((sink) => onRecordedTime(simulateSink(sink, startMs), startMs, speed));
}

/** A sink whose clock runs `speed` times slower than the recording's: times in and out are converted. */
function onRecordedTime(sink: SimulatedSink, startMs: number, speed: number): SimulatedSink {
  if (speed === 1) return sink;
  const toSinkMs = (recordedMs: number): number => startMs + (recordedMs - startMs) / speed;
  return {
    offer: (event, nowMs) => sink.offer(event, toSinkMs(nowMs)),
    advance: (nowMs) => sink.advance(toSinkMs(nowMs)),
    drain: () => sink.drain(),
    tally() {
      const tally = sink.tally();
      const messages = tally.messages.map((m) => ({ ...m, atMs: startMs + (m.atMs - startMs) * speed }));
      return { ...tally, messages };
    },
  };
}

/** One simulated sink's state between decisions. */
interface SinkRun {
  readonly policy: SchedulePolicy;
  readonly bucket: TokenBucket;
  schedule: ScheduleState;
  entries: Entry[];
  wakeAtMs: number | null;
  readonly counts: {
    notifications: number;
    alerts: number;
    repeats: number;
    silenced: number;
    filtered: number;
  };
  readonly messages: SimulatedMessage[];
}

/** One sink: deliveries always succeed at once, so only the feed, grouping and the rate limit shape them. */
export function simulateSink(sink: AlertSinkConfig, startMs: number): SimulatedSink {
  const run: SinkRun = {
    policy: {
      maxAgeMs: sink.maxAgeMs,
      resendIntervalMs: 0, // Alertmanager's periodic re-send of what fires is not a notification
      grouping: groupPolicyOf(sink, CHATOPS_DEFAULT_POLICY),
    },
    bucket: createTokenBucket({ ratePerMinute: sink.ratePerMinute, burst: sink.burst, nowMs: startMs }),
    schedule: initialSchedule(startMs, false),
    entries: [],
    wakeAtMs: null,
    counts: { notifications: 0, alerts: 0, repeats: 0, silenced: 0, filtered: 0 },
    messages: [],
  };
  const advance = (nowMs: number): void => {
    while (run.wakeAtMs !== null && run.wakeAtMs <= nowMs) run.wakeAtMs = decide(run, run.wakeAtMs);
  };
  let offeredAtMs = startMs;
  // the daemon's own feed decides what reaches the worker: routed, muted (counted by the hub's mark) or forgotten
  const worker = {
    enqueue(event: AlertEvent): void {
      run.entries.push({
        id: String(event.seq),
        createdAtMs: offeredAtMs,
        attempts: 0,
        nextAttemptAtMs: offeredAtMs,
        payload: event,
      });
      run.wakeAtMs = decide(run, offeredAtMs);
    },
    skip(): void {},
    forget(fingerprint: string): void {
      run.schedule = { ...run.schedule, groups: forgetAlert(run.schedule.groups, fingerprint) };
    },
  };
  const silenced = { sinkSilenced: { inc: (): void => void (run.counts.silenced += 1) } };
  return {
    offer(event, nowMs) {
      advance(nowMs);
      offeredAtMs = nowMs;
      if (!routeAlert(sink, event.alert)) run.counts.filtered += 1;
      dispatchTo(sink, worker, event, silenced);
    },
    advance,
    drain() {
      for (let guard = 0; run.entries.length > 0 && run.wakeAtMs !== null && guard < 1_000_000; guard++)
        run.wakeAtMs = decide(run, run.wakeAtMs);
    },
    tally: () => ({ name: sink.name, kind: sink.kind, ...run.counts, messages: run.messages }),
  };
}

/** Decide at `nowMs` (the worker's scheduler) until it waits; returns when it wants to be woken (null: idle). */
function decide(run: SinkRun, nowMs: number): number | null {
  for (let guard = 0; guard < 100_000; guard++) {
    const { bucket } = run;
    const view = {
      nowMs,
      entries: run.entries,
      unwrittenCount: 0,
      bucket: { msUntilTokenMs: bucket.msUntilToken(nowMs) },
      firingCount: 0,
      stop: null,
    };
    const decision = decideNext(run.schedule, view, run.policy);
    run.schedule = decision.state;
    if (decision.expired.length > 0) run.entries = run.entries.filter((e) => !decision.expired.includes(e));
    const { action } = decision;
    if (action.kind === "wait") return nowMs + action.delayMs;
    if (action.kind === "absorb") {
      const absorbed = new Set(action.ids);
      run.entries = run.entries.filter((entry) => !absorbed.has(entry.id));
      continue;
    }
    if (action.kind !== "send") return null;
    bucket.tryTake(nowMs);
    const ok = { kind: "ok", status: 200 } as const;
    const policy = { ...CHATOPS_DEFAULT_POLICY, grouping: run.policy.grouping };
    run.schedule = settleAttempt(run.schedule, action, ok, attemptFacts(nowMs), policy).state;
    const sent = new Set(action.notification.entries.map((entry) => entry.id));
    run.entries = run.entries.filter((entry) => !sent.has(entry.id));
    record(run, action.notification, nowMs);
  }
  return null;
}

/** Count and keep one sent notification. */
function record(run: SinkRun, notification: GroupNotification<Entry>, nowMs: number): void {
  run.counts.notifications += 1;
  run.counts.alerts += notification.entries.length;
  if (notification.repeat) run.counts.repeats += 1;
  run.messages.push({
    atMs: nowMs,
    group: notification.key,
    repeat: notification.repeat,
    alerts: notification.alerts.map(({ alert }) => ({
      fingerprint: alert.fingerprint,
      status: alert.status,
    })),
    seqs: notification.entries.map((entry) => entry.payload.seq),
  });
}

/** The facts of an attempt that succeeded at once. */
function attemptFacts(nowMs: number): { nowMs: number; consecutiveFailures: number; jitter: number } {
  return { nowMs, consecutiveFailures: 0, jitter: 0 };
}
