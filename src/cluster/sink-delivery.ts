// Cluster notifications, pure parts: the per-sink consumer and dead-letter names, what a journaled message is for a
// sink, how a delivery attempt settles (ack, nak with a delay, dead letter), and the cluster-wide token bucket.
import type { AlertSinkConfig } from "../config/types.js";
import { isMutedTransition, type AlertEvent, type JournaledEvent } from "../domain/events.js";
import type { DeliveryOutcome } from "../sinks/chatops/delivery.js";
import { routeAlert } from "../sinks/chatops/route.js";
import { sinkRetryDelayMs, type SinkRetryPolicy } from "../sinks/chatops/sink-schedule.js";

/**
 * A sink name (`[A-Za-z0-9][A-Za-z0-9_.-]*`) in a JetStream name or subject token, where `.` is not allowed:
 * `_` and `.` are escaped (`_5F`, `_2E`), so two sink names never share a consumer or a dead-letter stream.
 */
function escapeSinkName(name: string): string {
  return name.replace(/[_.]/g, (c) => (c === "_" ? "_5F" : "_2E"));
}

/** The durable consumer of the events stream that delivers to `sink`, shared by every member. */
export function sinkConsumerName(sink: string): string {
  return `pm_sink_${escapeSinkName(sink)}`;
}

/** The stream that keeps `sink`'s dead letters, and the subject they are published on. */
export function deadLetterStream(sink: string): { readonly stream: string; readonly subject: string } {
  const token = escapeSinkName(sink);
  return { stream: `pm_dead_${token}`, subject: `pm.dead.${token}` };
}

/** What a message of the events stream is for one sink. */
export type MessageStep =
  /** Not a notification for this sink (a lifecycle event, routed elsewhere, muted): acknowledged at once. */
  | { readonly kind: "skip"; readonly muted: boolean }
  | { readonly kind: "dead_letter"; readonly event: AlertEvent }
  | { readonly kind: "deliver"; readonly event: AlertEvent };

/** Decide what `sink` does with a journaled event (undefined: malformed) journaled `ageMs` ago. */
export function messageStep(
  event: JournaledEvent | undefined,
  sink: AlertSinkConfig,
  ageMs: number,
): MessageStep {
  if (event?.type !== "alert" || !routeAlert(sink, event.alert)) return { kind: "skip", muted: false };
  if (isMutedTransition(event.alert)) return { kind: "skip", muted: true };
  if (ageMs >= sink.maxAgeMs) return { kind: "dead_letter", event };
  return { kind: "deliver", event };
}

/** How a message is settled after a delivery attempt. */
export type Settlement =
  | { readonly kind: "ack" }
  | { readonly kind: "nak"; readonly delayMs: number }
  | { readonly kind: "dead_letter"; readonly reason: "rejected" | "max_age" };

/** What is known when an attempt finished. */
export interface SettleFacts {
  readonly ageMs: number;
  readonly maxAgeMs: number;
  /** The sink's consecutive failures, this one included. */
  readonly consecutiveFailures: number;
  /** A draw in [0, 1) for the backoff's jitter. */
  readonly jitter: number;
}

/**
 * Settle an attempt: accepted → ack; a 4xx about the message → dead letter; anything retryable → redelivered
 * after the receiver's `Retry-After` or the backoff, but never past the sink's `maxAgeMs` (then dead letter).
 */
export function settle(outcome: DeliveryOutcome, facts: SettleFacts, policy: SinkRetryPolicy): Settlement {
  switch (outcome.kind) {
    case "ok":
      return { kind: "ack" };
    case "rejected":
      return { kind: "dead_letter", reason: "rejected" };
    case "aborted":
      return { kind: "nak", delayMs: 0 };
    case "retry":
    case "misconfigured": {
      const leftMs = facts.maxAgeMs - facts.ageMs;
      if (leftMs <= 0) return { kind: "dead_letter", reason: "max_age" };
      const delayMs = sinkRetryDelayMs(outcome, facts.consecutiveFailures, facts.jitter, policy);
      return { kind: "nak", delayMs: Math.min(delayMs, leftMs) };
    }
  }
}

/** A sink's token bucket as stored in NATS KV (shared by the members). */
export interface RateState {
  readonly tokens: number;
  readonly atMs: number;
}

/**
 * Take one token from a bucket of `burst` refilled at `ratePerMinute` (a missing state is a full bucket):
 * the state to store and 0, or the refilled state and how long until a token is there.
 */
export function takeToken(
  state: RateState | undefined,
  nowMs: number,
  limit: { readonly ratePerMinute: number; readonly burst: number },
): { readonly state: RateState; readonly waitMs: number } {
  const capacity = Math.max(1, Math.floor(limit.burst));
  const perMs = limit.ratePerMinute / 60_000;
  if (!(perMs > 0)) return { state: { tokens: capacity, atMs: nowMs }, waitMs: 0 };
  const before = state ?? { tokens: capacity, atMs: nowMs };
  const elapsedMs = Math.max(0, nowMs - before.atMs);
  const tokens = Math.min(capacity, before.tokens + elapsedMs * perMs);
  const atMs = Math.max(before.atMs, nowMs);
  if (tokens >= 1) return { state: { tokens: tokens - 1, atMs }, waitMs: 0 };
  return { state: { tokens, atMs }, waitMs: Math.ceil((1 - tokens) / perMs) };
}

/** Parse a stored bucket state (undefined when missing or malformed: a full bucket). */
export function parseRateState(text: string | undefined): RateState | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Partial<RateState>;
    return typeof value.tokens === "number" && typeof value.atMs === "number"
      ? { tokens: value.tokens, atMs: value.atMs }
      : undefined;
  } catch {
    return undefined;
  }
}
