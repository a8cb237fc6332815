// `cluster_error` to the chat-ops sinks, directly from the member that raised it: the shared consumers need the NATS
// the member cannot reach, so it sends each transition itself, once per routed sink (a stable delivery id across
// retries), and a firing that resolves before it could be sent is dropped together with its resolve.
import type { Observable, Subscription } from "rxjs";
import { filter } from "rxjs";
import type { Logger } from "pino";
import type { AlertSinkConfig } from "../config/types.js";
import type { AlertPayload, BusEvent } from "../domain/events.js";
import { endpointUrl } from "../sinks/chatops/render.js";
import { routeAlert } from "../sinks/chatops/route.js";
import { sendMessage, type SendDeps } from "../sinks/chatops/send.js";
import { sinkRetryDelayMs, type SinkRetryPolicy } from "../sinks/chatops/sink-schedule.js";
import { isClusterErrorEvent } from "./cluster-error-alert.js";

/**
 * The queue after `alert` arrived: a resolve whose firing waits unsent behind the head (the head may be in flight)
 * takes that firing out and is not queued itself (nothing happened that anyone was told of); else appended.
 */
export function queueTransition(queue: readonly AlertPayload[], alert: AlertPayload): AlertPayload[] {
  if (alert.status === "resolved") {
    const index = queue.findIndex(
      (queued, i) =>
        i > 0 &&
        queued.status === "firing" &&
        queued.fingerprint === alert.fingerprint &&
        queued.startsAt === alert.startsAt,
    );
    if (index > 0) return queue.filter((_, i) => i !== index);
  }
  return [...queue, alert];
}

/** The delivery id of a transition: the same on every retry, distinct per member, incident and status. */
export function directDeliveryId(alert: AlertPayload): string {
  return `${alert.rule}-${alert.fingerprint}-${alert.startsAt}-${alert.status}`;
}

/** What the notifier needs. */
export interface ClusterErrorNotifierDeps extends SendDeps {
  /** The member's own bus (where `cluster_error` is announced). */
  readonly events$: Observable<BusEvent>;
  readonly logger: Logger;
  readonly random: () => number;
  readonly policy: SinkRetryPolicy;
}

/** The running notifier; `reconfigure` takes the new sink list, `stop` aborts what is in flight. */
export interface ClusterErrorNotifier {
  reconfigure(sinks: readonly AlertSinkConfig[]): void;
  stop(): void;
}

/** One sink's queue of transitions and its sender. */
interface Lane {
  sink: AlertSinkConfig;
  queue: AlertPayload[];
  sending: boolean;
}

/** Start sending the member's `cluster_error` transitions to `sinks` (the enabled alert sinks). */
export function startClusterErrorNotifier(
  deps: ClusterErrorNotifierDeps,
  sinks: readonly AlertSinkConfig[],
): ClusterErrorNotifier {
  const abort = new AbortController();
  const lanes = new Map<string, Lane>();
  const configure = (next: readonly AlertSinkConfig[]): void => {
    const names = new Set(next.map((sink) => sink.name));
    for (const name of lanes.keys()) if (!names.has(name)) lanes.delete(name);
    for (const sink of next) {
      const lane = lanes.get(sink.name);
      if (lane === undefined) lanes.set(sink.name, { sink, queue: [], sending: false });
      else lane.sink = sink;
    }
  };
  configure(sinks);
  const subscription: Subscription = deps.events$.pipe(filter(isClusterErrorEvent)).subscribe((event) => {
    if (event.type !== "alert") return;
    for (const lane of lanes.values()) {
      if (!routeAlert(lane.sink, event.alert)) continue;
      lane.queue = queueTransition(lane.queue, event.alert);
      if (!lane.sending) void drain(deps, lane, abort.signal);
    }
  });
  return {
    reconfigure: configure,
    stop() {
      subscription.unsubscribe();
      abort.abort();
    },
  };
}

/** Send the lane's queue in order: each until the sink accepts or rejects it, or it is older than `maxAgeMs`. */
async function drain(deps: ClusterErrorNotifierDeps, lane: Lane, stopSignal: AbortSignal): Promise<void> {
  lane.sending = true;
  let failures = 0;
  try {
    for (let head = lane.queue[0]; head !== undefined && !stopSignal.aborted; head = lane.queue[0]) {
      const { sink } = lane;
      const target = { sink, url: endpointUrl(sink), stopSignal };
      const outcome = await sendMessage(
        deps,
        target,
        { kind: "alert", event: { type: "alert", seq: 0, alert: head } },
        directDeliveryId(head),
      );
      const ageMs = deps.nowMs() - Date.parse(head.endsAt ?? head.startsAt);
      if (outcome.kind === "ok" || outcome.kind === "rejected" || ageMs >= sink.maxAgeMs) {
        if (outcome.kind !== "ok")
          deps.logger.warn({ sink: sink.name, outcome: outcome.kind }, "cluster_error not delivered");
        lane.queue = lane.queue.slice(1);
        failures = 0;
        continue;
      }
      if (outcome.kind === "aborted") return;
      failures++;
      const delayMs = sinkRetryDelayMs(outcome, failures, deps.random(), deps.policy);
      await abortableSleep(deps, Math.min(delayMs, sink.maxAgeMs), stopSignal);
    }
  } finally {
    lane.sending = false;
  }
}

/** Sleep `delayMs`, or less when `signal` aborts (a stop never waits for a retry). */
function abortableSleep(deps: SendDeps, delayMs: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      deps.timers.clearTimer(handle);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const handle = deps.timers.setTimer(done, delayMs);
    signal.addEventListener("abort", done);
  });
}
