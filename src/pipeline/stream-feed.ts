// The streamed targets' side of the pipeline: one SSE connection per (interval, chunk of pairs), prices routed to
// their targets, and each target's stream/poll decision (stream-health.ts) stepped on prices, checks and outages.
import { interval as every, type Observable, type SchedulerLike, Subscription, asyncScheduler } from "rxjs";
import type { Logger } from "pino";
import { PmError } from "../domain/errors.js";
import { INTERVAL_MS, type Interval, type PairPrice } from "../domain/types.js";
import type { Metrics } from "../metrics.js";
import type { StreamSignal } from "../upstream/multi-stream-client.js";
import {
  initialStreamHealth,
  stepStreamHealth,
  type StreamHealth,
  type StreamHealthInput,
} from "./stream-health.js";

/** How streams are opened and judged (from `upstream.stream`). */
export interface StreamSettings {
  /** Open one connection carrying `pairs` at `interval` (the daemon: multiStream$ on the shared pool). */
  readonly open: (
    pairs: readonly string[],
    interval: Interval,
    silenceMs: number,
  ) => Observable<StreamSignal>;
  readonly staleIntervals: number;
  readonly recoverEvents: number;
  readonly maxPairsPerConnection: number;
}

/** What the feed tells the runner about a target (by id). */
export interface StreamFeedHooks {
  /** A streamed price of the target: fed like a poll success (the runner drops repeats). */
  price(targetId: string, price: PairPrice): void;
  /** The stream's history of the target's pair (the `historical` event). */
  history(targetId: string, prices: readonly PairPrice[]): void;
  /** The target now takes its prices from `mode`; on a fallback, `error` says why. */
  modeChanged(targetId: string, mode: StreamHealth["mode"], error: PmError | null): void;
}

/** A target that asks to be streamed. */
export interface StreamedTargetRef {
  readonly id: string;
  readonly pair: string;
  readonly interval: Interval;
}

/** The running feed: reconfigured with the list of streamed targets; stopped with the pipeline. */
export interface StreamFeed {
  update(targets: readonly StreamedTargetRef[]): void;
  /** New settings (a reload): every connection reopens with them; each target keeps its stream/poll mode. */
  reconfigure(settings: StreamSettings): void;
  stop(): void;
}

interface FeedTarget {
  readonly ref: StreamedTargetRef;
  health: StreamHealth;
}

/** The shortest stale window: a 100 ms stream is not judged on a few hundred ms of scheduling noise. */
const MIN_STALE_MS = 2_000;

/** Milliseconds without a price after which a stream of `interval` is stale. */
export function staleAfterMs(settings: Pick<StreamSettings, "staleIntervals">, interval: Interval): number {
  return Math.max(MIN_STALE_MS, settings.staleIntervals * INTERVAL_MS[interval]);
}

/** What a feed needs from the outside world besides its settings and hooks. */
export interface StreamFeedDeps {
  readonly nowMs: () => number;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly scheduler?: SchedulerLike;
}

/** Start a feed with no targets; `update` opens what they need. */
export function createStreamFeed(
  settings: StreamSettings,
  hooks: StreamFeedHooks,
  deps: StreamFeedDeps,
): StreamFeed {
  return new Feed(settings, hooks, deps);
}

/** One connection's bookkeeping: failures in a row (to log once per burst) and whether it is open now. */
interface ConnectionState {
  downs: number;
  connected: boolean;
}

/** The feed's state: its targets (by id and by interval|pair), its connections and what they were opened for. */
class Feed implements StreamFeed {
  private readonly targets = new Map<string, FeedTarget>();
  private readonly byPair = new Map<string, FeedTarget[]>();
  private connections = new Subscription();
  private signature = "";
  private readonly checks: Subscription;

  constructor(
    private settings: StreamSettings,
    private readonly hooks: StreamFeedHooks,
    private readonly deps: StreamFeedDeps,
  ) {
    this.checks = every(1_000, deps.scheduler ?? asyncScheduler).subscribe(() => {
      const atMs = deps.nowMs();
      for (const target of this.targets.values()) this.step(target, { kind: "check", atMs }, null);
    });
  }

  update(refs: readonly StreamedTargetRef[]): void {
    const nowMs = this.deps.nowMs();
    const wanted = new Map(refs.map((ref) => [ref.id, ref]));
    for (const [id, target] of this.targets)
      if (!sameRef(wanted.get(id), target.ref)) this.targets.delete(id);
    for (const ref of refs)
      if (!this.targets.has(ref.id)) this.targets.set(ref.id, { ref, health: initialStreamHealth(nowMs) });
    this.byPair.clear();
    for (const target of this.targets.values()) {
      const key = `${target.ref.interval}|${target.ref.pair}`;
      this.byPair.set(key, [...(this.byPair.get(key) ?? []), target]);
    }
    exportModes(this.deps.metrics, this.targets);
    this.reopen(false);
  }

  reconfigure(settings: StreamSettings): void {
    this.settings = settings;
    this.reopen(true);
  }

  /** (Re)open the connections when the pairs per interval changed, or always (new settings). */
  private reopen(always: boolean): void {
    const next = JSON.stringify([...pairsByInterval(this.targets)]);
    if (next === this.signature && !always) return;
    this.signature = next;
    this.connections.unsubscribe();
    this.connections = this.open();
  }

  stop(): void {
    this.checks.unsubscribe();
    this.connections.unsubscribe();
    this.targets.clear();
    this.byPair.clear();
    exportModes(this.deps.metrics, this.targets);
  }

  /** Open a connection per interval and chunk of its pairs, each with its connection gauge kept honest. */
  private open(): Subscription {
    const all = new Subscription();
    const { settings, deps } = this;
    for (const [interval, pairs] of pairsByInterval(this.targets)) {
      for (let i = 0; i < pairs.length; i += settings.maxPairsPerConnection) {
        const chunk = pairs.slice(i, i + settings.maxPairsPerConnection);
        const state: ConnectionState = { downs: 0, connected: false };
        const signals = settings.open(chunk, interval, staleAfterMs(settings, interval));
        all.add(signals.subscribe((signal) => this.onSignal(interval, chunk, signal, state)));
        all.add(() => {
          if (state.connected) deps.metrics.streamConnections.dec({ interval });
        });
      }
    }
    return all;
  }

  /** One signal of a connection: metrics, then its targets' health and prices. */
  private onSignal(
    interval: Interval,
    pairs: readonly string[],
    signal: StreamSignal,
    state: ConnectionState,
  ): void {
    const { metrics, logger } = this.deps;
    switch (signal.kind) {
      case "connected":
        state.connected = true;
        metrics.streamConnections.inc({ interval });
        // its targets' stale windows count from here (a slow connect is not a silent stream)
        return this.stepConnection(interval, pairs, "alive", null);
      case "progress":
        // bytes of the first event still arriving: alive, however long that event takes
        return this.stepConnection(interval, pairs, "alive", null);
      case "keepalive":
        metrics.streamEvents.inc({ interval, kind: "keepalive" });
        return;
      case "event":
        metrics.streamEvents.inc({ interval, kind: signal.event.kind });
        if (signal.event.kind === "historical") {
          this.stepConnection(interval, pairs, "alive", null);
          return this.routeHistory(interval, signal.event.prices);
        }
        if (state.downs > 0) logger.info({ interval, failures: state.downs }, "price stream recovered");
        state.downs = 0;
        return this.routePrices(interval, signal.event.prices);
      case "down": {
        if (state.connected) metrics.streamConnections.dec({ interval });
        state.connected = false;
        state.downs++;
        const { error, reconnectInMs } = signal;
        metrics.streamReconnects.inc({ interval, code: error.code });
        const level = state.downs === 1 ? "warn" : "debug";
        const failures = state.downs;
        logger[level](
          { interval, code: error.code, reconnectInMs, failures, err: error },
          "price stream down",
        );
        return this.stepConnection(interval, pairs, "down", error);
      }
    }
  }

  /** Step the health of every target of one connection with an input of that connection. */
  private stepConnection(
    interval: Interval,
    pairs: readonly string[],
    kind: "alive" | "down",
    cause: PmError | null,
  ): void {
    const atMs = this.deps.nowMs();
    for (const pair of pairs)
      for (const target of this.byPair.get(`${interval}|${pair}`) ?? [])
        this.step(target, { kind, atMs }, cause);
  }

  /** Each price to the targets of its pair: their health first (a recovery stops the fallback), then the price. */
  private routePrices(interval: Interval, prices: readonly PairPrice[]): void {
    const atMs = this.deps.nowMs();
    for (const price of prices) {
      for (const target of this.byPair.get(`${interval}|${price.pairId}`) ?? []) {
        this.step(target, { kind: "price", atMs }, null);
        this.hooks.price(target.ref.id, price);
      }
    }
  }

  /** The historical event, grouped by pair and handed to each target of that pair. */
  private routeHistory(interval: Interval, prices: readonly PairPrice[]): void {
    const perPair = new Map<string, PairPrice[]>();
    for (const price of prices) perPair.set(price.pairId, [...(perPair.get(price.pairId) ?? []), price]);
    for (const [pair, series] of perPair)
      for (const target of this.byPair.get(`${interval}|${pair}`) ?? [])
        this.hooks.history(target.ref.id, series);
  }

  /** Step one target's health and tell the runner when its mode changed. */
  private step(target: FeedTarget, input: StreamHealthInput, cause: PmError | null): void {
    const before = target.health.mode;
    target.health = stepStreamHealth(target.health, input, {
      staleAfterMs: staleAfterMs(this.settings, target.ref.interval),
      recoverEvents: this.settings.recoverEvents,
    });
    const mode = target.health.mode;
    if (mode === before) return;
    if (mode === "poll") this.deps.metrics.streamFallbacks.inc({ interval: target.ref.interval });
    exportModes(this.deps.metrics, this.targets);
    this.hooks.modeChanged(target.ref.id, mode, mode === "poll" ? staleError(target, cause) : null);
  }
}

function sameRef(a: StreamedTargetRef | undefined, b: StreamedTargetRef): boolean {
  return a !== undefined && a.pair === b.pair && a.interval === b.interval;
}

/** The distinct pairs of each interval, sorted (so the same targets always open the same connections). */
function pairsByInterval(targets: ReadonlyMap<string, FeedTarget>): Map<Interval, string[]> {
  const out = new Map<Interval, Set<string>>();
  for (const { ref } of targets.values())
    out.set(ref.interval, (out.get(ref.interval) ?? new Set()).add(ref.pair));
  return new Map(
    [...out].sort(([a], [b]) => a.localeCompare(b)).map(([interval, pairs]) => [interval, [...pairs].sort()]),
  );
}

function exportModes(metrics: Metrics, targets: ReadonlyMap<string, FeedTarget>): void {
  let polling = 0;
  for (const target of targets.values()) if (target.health.mode === "poll") polling++;
  metrics.streamTargets.set({ mode: "stream" }, targets.size - polling);
  metrics.streamTargets.set({ mode: "poll" }, polling);
}

/** The typed error a fallback is recorded with: the stream gave no price of the pair within its window (and why, if known). */
function staleError(target: FeedTarget, cause: PmError | null): PmError {
  const { pair, interval } = target.ref;
  const why =
    cause === null ? "no price within the stale window" : `connection down (${cause.code}: ${cause.message})`;
  return new PmError(
    "PM_ERR_UPSTREAM_STREAM_STALE",
    `multi_stream ${interval}: ${pair}: ${why}; polling instead`,
    {
      retryable: true,
      details: { endpoint: "multi_stream" },
      ...(cause === null ? {} : { cause }),
    },
  );
}
