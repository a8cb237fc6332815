// What each configured chat-ops sink would have sent: the daemon's own routing, muting and rate-limit scheduler, in virtual time, nothing delivered.
import type { AlertSinkConfig, SinkConfig } from "../config/types.js";
import type { AlertEvent } from "../domain/events.js";
import { CHATOPS_DEFAULT_POLICY } from "../sinks/chatops/chatops.js";
import { supportsDigest } from "../sinks/chatops/render.js";
import { routeAlert } from "../sinks/chatops/route.js";
import {
  decideNext,
  initialSchedule,
  settleAttempt,
  type SchedulePolicy,
  type ScheduleEntry,
  type ScheduleState,
} from "../sinks/chatops/sink-schedule.js";
import { createTokenBucket, type TokenBucket } from "../token-bucket.js";

/** What one sink would have received. */
export interface SinkTally {
  readonly name: string;
  readonly kind: string;
  /** Messages sent (a digest is one message). */
  readonly notifications: number;
  /** Alert transitions those messages carried. */
  readonly alerts: number;
  readonly digests: number;
  /** Transitions routed to the sink but muted by a maintenance window. */
  readonly silenced: number;
  /** Transitions its filters (rules, pairs, severity, labels, send-resolved) kept from it. */
  readonly filtered: number;
  /** Each message: when it was sent and the fingerprints and statuses it carried. */
  readonly messages: readonly SimulatedMessage[];
}

/** One message a sink would have sent. */
export interface SimulatedMessage {
  readonly atMs: number;
  readonly digest: boolean;
  readonly alerts: readonly { readonly fingerprint: string; readonly status: string }[];
}

/** A simulated sink: fed the bus's alert events, advanced in virtual time. */
export interface SimulatedSink {
  offer(event: AlertEvent, nowMs: number): void;
  /** Run every decision due up to `nowMs` (sends that waited for a token). */
  advance(nowMs: number): void;
  /** Run until nothing waits any more (the end of the replay: what the outbox would still send). */
  drain(): void;
  tally(): SinkTally;
}

interface Entry extends ScheduleEntry {
  readonly event: AlertEvent;
}

/** The alert sinks of a config (heartbeats send no alerts), each simulated. */
export function simulateSinks(sinks: readonly SinkConfig[], startMs: number): SimulatedSink[] {
  return sinks
    .filter((sink): sink is AlertSinkConfig => sink.kind !== "heartbeat" && sink.enabled)
    .map((sink) => simulateSink(sink, startMs));
}

/** One simulated sink's state between decisions. */
interface SinkRun {
  readonly sink: AlertSinkConfig;
  readonly policy: SchedulePolicy;
  readonly bucket: TokenBucket;
  schedule: ScheduleState;
  entries: Entry[];
  wakeAtMs: number | null;
  readonly counts: {
    notifications: number;
    alerts: number;
    digests: number;
    silenced: number;
    filtered: number;
  };
  readonly messages: SimulatedMessage[];
}

/** One sink: deliveries always succeed at once, so only filters, muting, the rate limit and digests shape them. */
export function simulateSink(sink: AlertSinkConfig, startMs: number): SimulatedSink {
  const run: SinkRun = {
    sink,
    policy: {
      maxAgeMs: sink.maxAgeMs,
      resendIntervalMs: 0, // Alertmanager's periodic re-send of what fires is not a notification
      maxDigestEntries: CHATOPS_DEFAULT_POLICY.maxDigestEntries,
      digests: supportsDigest(sink),
    },
    bucket: createTokenBucket({ ratePerMinute: sink.ratePerMinute, burst: sink.burst, nowMs: startMs }),
    schedule: initialSchedule(startMs, false),
    entries: [],
    wakeAtMs: null,
    counts: { notifications: 0, alerts: 0, digests: 0, silenced: 0, filtered: 0 },
    messages: [],
  };
  const advance = (nowMs: number): void => {
    while (run.wakeAtMs !== null && run.wakeAtMs <= nowMs) run.wakeAtMs = decide(run, run.wakeAtMs);
  };
  return {
    offer(event, nowMs) {
      advance(nowMs);
      if (!routeAlert(sink, event.alert)) {
        run.counts.filtered += 1;
        return;
      }
      if ((event.alert.silencedBy?.length ?? 0) > 0) {
        run.counts.silenced += 1;
        return;
      }
      run.entries.push({
        id: String(event.seq),
        createdAtMs: nowMs,
        attempts: 0,
        nextAttemptAtMs: nowMs,
        event,
      });
      run.wakeAtMs = decide(run, nowMs);
    },
    advance,
    drain() {
      for (let guard = 0; run.wakeAtMs !== null && guard < 1_000_000; guard++)
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
      bucket: { msUntilTokenMs: bucket.msUntilToken(nowMs), availableTokens: bucket.available(nowMs) },
      firingCount: 0,
      stop: null,
    };
    const decision = decideNext(run.schedule, view, run.policy);
    run.schedule = decision.state;
    if (decision.expired.length > 0) run.entries = run.entries.filter((e) => !decision.expired.includes(e));
    const { action } = decision;
    if (action.kind === "wait") return nowMs + action.delayMs;
    if (action.kind !== "send") return null;
    bucket.tryTake(nowMs);
    const ok = { kind: "ok", status: 200 } as const;
    run.schedule = settleAttempt(run.schedule, action, ok, attemptFacts(nowMs), CHATOPS_DEFAULT_POLICY).state;
    const sent = new Set(action.batch.map((entry) => entry.id));
    run.entries = run.entries.filter((entry) => !sent.has(entry.id));
    run.counts.notifications += 1;
    run.counts.alerts += action.batch.length;
    if (action.digest) run.counts.digests += 1;
    run.messages.push({
      atMs: nowMs,
      digest: action.digest,
      alerts: action.batch.map(({ event }) => ({
        fingerprint: event.alert.fingerprint,
        status: event.alert.status,
      })),
    });
  }
  return null;
}

/** The facts of an attempt that succeeded at once. */
function attemptFacts(nowMs: number): { nowMs: number; consecutiveFailures: number; jitter: number } {
  return { nowMs, consecutiveFailures: 0, jitter: 0 };
}
