// Cluster notification grouping, the shell: a grouping sink's shared state in NATS KV (read, compare-and-set),
// the take-in of the events its consumer pulls, and each member's scheduler loop, which decides with the single
// daemon's scheduler and sends a due notification only after its claim won the compare-and-set.
import type { KV, KvEntry } from "@nats-io/kv";
import type { Logger } from "pino";
import type { AlertSinkConfig } from "../config/types.js";
import type { AlertEvent } from "../domain/events.js";
import type { Timers } from "../http-client.js";
import type { Metrics } from "../metrics.js";
import type { DeliveryOutcome } from "../sinks/chatops/delivery.js";
import { actionMessage } from "../sinks/chatops/send.js";
import { dispatchTo } from "../sinks/chatops/sink-feed.js";
import type {
  AttemptFacts,
  RefreshAction,
  SchedulePolicy,
  SendAction,
} from "../sinks/chatops/sink-schedule.js";
import type { WorkerPolicy } from "../sinks/chatops/sink-worker.js";
import { createWaker, type Waker } from "../sinks/chatops/waker.js";
import type { AnyMessage } from "../sinks/chatops/types.js";
import { isAlertEvent } from "../state/event-schema.js";
import {
  decideShared,
  dropEntries,
  forgetShared,
  takeIn,
  type SharedLimits,
  encodeShared,
  initialSharedState,
  parseShared,
  settleShared,
  withClaim,
  type SendClaim,
  type SharedEntry,
  type SharedSinkState,
} from "./sink-groups.js";

/** Longest sleep of an idle scheduler (the key's watch wakes it sooner on any change). */
const IDLE_MS = 5_000;
/** Pause after a failed step (NATS away). */
const RETRY_MS = 1_000;
/** Compare-and-set attempts of one update before it gives up (beyond that NATS itself fails). */
const UPDATE_ATTEMPTS = 8;

/** What a grouping sink's scheduler and take-in need. */
export interface GroupLoopContext {
  readonly sink: AlertSinkConfig;
  /** The sink's key in the groups bucket. */
  readonly key: string;
  readonly kv: KV;
  readonly memberId: string;
  readonly schedulePolicy: SchedulePolicy;
  /** Backoff bounds and sizes shared by every sink. */
  readonly policy: WorkerPolicy;
  /** Beyond the sink's timeout, how long a claim holds before the others take over. */
  readonly claimMarginMs: number;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly nowMs: () => number;
  readonly random: () => number;
  readonly timers: Timers;
  readonly stopSignal: AbortSignal;
  /** Send one message (a finished attempt is recorded in the member's view of the sink's health). */
  readonly send: (message: AnyMessage, deliveryId: string) => Promise<DeliveryOutcome>;
  /** Take a token from the cluster's bucket for the sink; how long to wait when there is none. */
  readonly takeToken: () => Promise<number>;
  /** Keep events as the sink's dead letters (de-duplicated by their seq). */
  readonly deadLetter: (events: readonly AlertEvent[], reason: "rejected" | "max_age") => Promise<void>;
  readonly consecutiveFailures: () => number;
  /** Told every state this member read or wrote (status: groups, pending entries). */
  readonly onState: (state: SharedSinkState) => void;
}

/** The state as read, with its KV revision (0: no record yet). */
interface Read {
  readonly state: SharedSinkState;
  readonly revision: number;
}

/** Read the sink's shared state (a missing or malformed record reads as a fresh state). */
export async function readShared(ctx: GroupLoopContext): Promise<Read> {
  const entry: KvEntry | null = await ctx.kv.get(ctx.key);
  if (entry === null || entry.operation !== "PUT")
    return { state: initialSharedState(ctx.nowMs()), revision: 0 };
  const state = parseShared(entry.string(), isAlertEvent);
  if (state === undefined)
    ctx.logger.error({ key: ctx.key }, "cluster: malformed group state in NATS replaced");
  return { state: state ?? initialSharedState(ctx.nowMs()), revision: entry.revision };
}

/** Write `state` if the record is still at `revision` (create when 0); false when another write came first. */
async function writeAt(ctx: GroupLoopContext, state: SharedSinkState, revision: number): Promise<boolean> {
  const value = encodeShared(state);
  try {
    if (revision === 0) await ctx.kv.create(ctx.key, value);
    else await ctx.kv.update(ctx.key, value, revision);
    ctx.metrics.sinkGroups.set({ sink: ctx.sink.name }, Object.keys(state.groups).length);
    ctx.onState(state);
    return true;
  } catch (error) {
    if (isConflict(error)) return false;
    throw error;
  }
}

/** A compare-and-set that lost (the revision moved on), as the server words it. */
function isConflict(error: unknown): boolean {
  return error instanceof Error && /wrong last sequence|key exists/i.test(error.message);
}

/**
 * Read, change and write the state until the write wins; `change` returns undefined to write nothing.
 * Returns what was written (undefined: nothing).
 */
export async function updateShared(
  ctx: GroupLoopContext,
  change: (current: SharedSinkState) => SharedSinkState | undefined,
): Promise<SharedSinkState | undefined> {
  for (let attempt = 1; ; attempt++) {
    const { state, revision } = await readShared(ctx);
    const next = change(state);
    if (next === undefined) return undefined;
    if (await writeAt(ctx, next, revision)) return next;
    if (attempt >= UPDATE_ATTEMPTS) throw new Error(`cluster: group state of ${ctx.sink.name} kept changing`);
  }
}

/** Run the sink's scheduler on this member until stopped: decide, claim, send, settle. */
export async function runGroupLoop(ctx: GroupLoopContext): Promise<void> {
  const waker = createWaker(ctx.timers);
  ctx.stopSignal.addEventListener("abort", waker.wake);
  const stopWatch = watchKey(ctx, waker);
  let failing = false;
  try {
    while (!ctx.stopSignal.aborted) {
      let delayMs: number | undefined;
      try {
        delayMs = await groupStep(ctx);
        if (failing) ctx.logger.info("cluster group scheduler: working again");
        failing = false;
      } catch (error) {
        if (ctx.stopSignal.aborted) return;
        if (!failing) ctx.logger.error({ err: error }, "cluster group scheduler failed, retrying");
        failing = true;
        delayMs = RETRY_MS;
      }
      if (delayMs !== 0) await waker.sleep(Math.min(delayMs ?? IDLE_MS, IDLE_MS));
    }
  } finally {
    ctx.stopSignal.removeEventListener("abort", waker.wake);
    stopWatch();
  }
}

/** Wake the scheduler on every change of the key (re-watched while the loop runs); returns the stop. */
function watchKey(ctx: GroupLoopContext, waker: Waker): () => void {
  let stopped = false;
  let stopIterator: (() => void) | undefined;
  const run = async (): Promise<void> => {
    while (!stopped) {
      try {
        const updates = await ctx.kv.watch({ key: ctx.key });
        stopIterator = () => updates.stop();
        for await (const _update of updates) waker.wake();
      } catch {
        // NATS away: the loop's own sleeps bound the delay; watch again after a pause
      }
      if (!stopped) await new Promise((resolve) => ctx.timers.setTimer(() => resolve(undefined), RETRY_MS));
    }
  };
  void run();
  return () => {
    stopped = true;
    stopIterator?.();
  };
}

/** One decision and what it leads to; the delay until the next (0: at once; undefined: idle). */
async function groupStep(ctx: GroupLoopContext): Promise<number | undefined> {
  const { state, revision } = await readShared(ctx);
  const nowMs = ctx.nowMs();
  const decision = decideShared(state, nowMs, ctx.memberId, ctx.schedulePolicy);
  if (decision.expired.length > 0) {
    await ctx.deadLetter(
      decision.expired.map((entry) => entry.payload),
      "max_age",
    );
    await updateShared(ctx, (current) =>
      dropEntries(
        current,
        decision.expired.map((entry) => entry.id),
      ),
    );
    return 0;
  }
  const { action } = decision;
  switch (action.kind) {
    case "wait":
      return action.delayMs;
    case "absorb":
      await updateShared(ctx, (current) => dropEntries(current, action.ids));
      return 0;
    case "send":
    case "refresh":
      return attemptShared(ctx, state, revision, action);
    case "idle":
    case "flush":
    case "exit":
      return undefined;
  }
}

/**
 * Claim the due notification (compare-and-set on the state it was decided from: of the members deciding
 * together, one wins), take a token, send it, and settle it on the state as it is then.
 */
async function attemptShared(
  ctx: GroupLoopContext,
  state: SharedSinkState,
  revision: number,
  action: SendAction<SharedEntry> | RefreshAction,
): Promise<number | undefined> {
  const claim: SendClaim = {
    memberId: ctx.memberId,
    deliveryId: action.deliveryId,
    untilMs: ctx.nowMs() + ctx.sink.timeoutMs + ctx.claimMarginMs,
  };
  if (!(await writeAt(ctx, withClaim(state, claim), revision))) return 0;
  const policy = { ...ctx.policy, grouping: ctx.schedulePolicy.grouping };
  const waitMs = await ctx.takeToken();
  if (waitMs > 0) {
    // no token: the attempt is not made (settled as cut short), the groups take in more meanwhile
    const aborted = factsOf(ctx);
    await updateShared(
      ctx,
      (now) => settleShared(now, claim, action, { kind: "aborted" }, aborted, policy)?.state,
    );
    return waitMs;
  }
  const message = actionMessage(policy.grouping.mode, action, Object.values(state.firing));
  const outcome = await ctx.send(message, action.deliveryId);
  if (outcome.kind === "rejected" && action.kind === "send")
    await ctx.deadLetter(
      action.notification.entries.map((entry) => entry.payload),
      "rejected",
    );
  const facts = factsOf(ctx);
  const written = await updateShared(
    ctx,
    (now) => settleShared(now, claim, action, outcome, facts, policy)?.state,
  );
  if (written === undefined)
    ctx.logger.warn(
      { deliveryId: claim.deliveryId },
      "cluster: a notification's claim expired before it was settled",
    );
  else if (outcome.kind === "ok" && action.kind === "send" && policy.grouping.mode.kind === "group")
    ctx.metrics.sinkGroupNotifications.inc({ sink: ctx.sink.name });
  return 0;
}

/** What is known once an attempt finished. */
function factsOf(ctx: GroupLoopContext): AttemptFacts {
  return { nowMs: ctx.nowMs(), consecutiveFailures: ctx.consecutiveFailures(), jitter: ctx.random() };
}

/** What the single daemon's feed does with an event for the sink (none: skip it). */
type FeedOp = { readonly kind: "enqueue" } | { readonly kind: "forget"; readonly fingerprint: string };

/** What became of a pulled event: taken in (or known from before), left out, or no room (leave it in the stream). */
export type FeedResult = "taken" | "skipped" | "full";

/**
 * Feed one pulled alert event journaled at `journaledAtMs` to the shared state exactly as the single daemon
 * feeds its worker (`dispatchTo`: routing, muted transitions, forgetting an unannounced resolve).
 */
export async function feedShared(
  ctx: GroupLoopContext,
  event: AlertEvent,
  journaledAtMs: number,
  limits: SharedLimits,
): Promise<FeedResult> {
  const seen: { op?: FeedOp } = {};
  dispatchTo(
    ctx.sink,
    {
      enqueue: () => (seen.op = { kind: "enqueue" }),
      skip: () => undefined,
      forget: (fingerprint) => (seen.op = { kind: "forget", fingerprint }),
    },
    event,
    ctx.metrics,
  );
  const feed = seen.op;
  if (feed === undefined) return "skipped";
  if (feed.kind === "forget") {
    await updateShared(ctx, (current) => forgetShared(current, feed.fingerprint));
    return "skipped";
  }
  let full = false;
  await updateShared(ctx, (current) => {
    const taken = takeIn(current, event, journaledAtMs, limits);
    full = taken.kind === "full";
    return taken.kind === "taken" ? taken.state : undefined;
  });
  return full ? "full" : "taken";
}

/** Whether a sink's notifications go through the shared group state (grouping or Alertmanager's batches). */
export function sharesGroups(schedulePolicy: SchedulePolicy): boolean {
  return schedulePolicy.grouping.mode.kind !== "each";
}
