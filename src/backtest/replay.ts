// Replays a recording through the daemon's own engine in virtual time: decoders, rule registry, alert engine, event hub, sink routing.
import type { AppConfig } from "../config/types.js";
import { createMaintenanceCalendar } from "../domain/maintenance.js";
import {
  createMonitorState,
  observe,
  retainTargets,
  tick,
  type Evaluation,
  type MonitorState,
} from "../domain/monitor.js";
import type { AlertPayload } from "../domain/events.js";
import { isPmError, type PmError } from "../domain/errors.js";
import type { PairPrice, TargetSpec } from "../domain/types.js";
import { silencingIds } from "../domain/silence.js";
import { createEventHub, type EventHub } from "../pipeline/event-hub.js";
import { fedPrice, isRepeatedPrice, type FedPrice } from "../pipeline/price-dedup.js";
import { toObservation } from "../pipeline/target-feed.js";
import { planTargets, type TargetPlan } from "../pipeline/targets.js";
import { candlesToHistory, warmupSinceMs } from "../pipeline/warmup.js";
import type { RecordLine, RecordLineOf } from "../record/format.js";
import { createJournal } from "../state/journal.js";
import { decodeCandleSeriesBody } from "../upstream/candlestick.js";
import { decodeStreamEvent } from "../upstream/multi-stream.js";
import { VERSION } from "../version.js";
import type { Interval } from "../domain/types.js";
import { decodeSnapshot, recordedFailure } from "./decode.js";
import type { LineOrigin, RecordingItem } from "./reader.js";
import { boundedSeries, type BoundedSeries } from "./price-series.js";
import { simulateSinks, type SimulatedSink, type SinkTally } from "./sink-sim.js";

/** The parts of the config a replay reads. */
export type ReplayConfig = Pick<AppConfig, "monitors" | "rules" | "sinks" | "maintenance" | "alerts"> & {
  readonly upstream: Pick<AppConfig["upstream"], "transport"> & {
    readonly url?: string;
    readonly simulator?: { readonly speed: number };
  };
};

/**
 * Simulated market seconds per second of the sinks' clock: the embedded simulator running faster than real
 * time carries the alert times with it while sinks stay on real time (app.ts `marketClock`), so a recording
 * made that way has its group timers and rate limits `speed` times longer in recorded time.
 */
export function sinkSpeedOf(upstream: ReplayConfig["upstream"]): number {
  return upstream.url === "simulator" ? (upstream.simulator?.speed ?? 1) : 1;
}

/** Something the replay could not use, with where it came from. */
export interface ReplayProblem {
  readonly kind: "line" | "decode" | "unknown_target" | "missing_target" | "missing_response" | "candles";
  readonly message: string;
  readonly at?: LineOrigin;
  readonly target?: string;
}

/** One alert transition the replay published, with its virtual time and bus sequence. */
export interface ReplayTransition {
  readonly seq: number;
  readonly atMs: number;
  readonly alert: AlertPayload;
}

/** A price the replay saw (the HTML report's chart). */
export interface ReplayPrice {
  readonly atMs: number;
  readonly price: number;
}

/** Everything a replay produced. */
export interface ReplayResult {
  readonly startMs: number;
  readonly endMs: number;
  readonly observations: number;
  readonly transitions: readonly ReplayTransition[];
  readonly sinks: readonly SinkTally[];
  readonly problems: readonly ReplayProblem[];
  /** Off-chain prices per target id (kept only when asked), downsampled to at most 3 000 points a target. */
  readonly prices: ReadonlyMap<string, readonly ReplayPrice[]>;
}

/** Options of a replay. */
export interface ReplayOptions {
  readonly fromMs?: number;
  readonly toMs?: number;
  /** Keep the off-chain prices (for a chart). */
  readonly keepPrices?: boolean;
  /** Told of each line consumed (a progress bar). */
  readonly onProgress?: (atMs: number) => void;
  /** Virtual milliseconds between alert ticks until a recorded start line says otherwise (default 1 000, the daemon's). */
  readonly tickMs?: number;
  /** Which configured targets take part (default: all); the others are neither fed nor reported missing. */
  readonly targets?: (spec: TargetSpec) => boolean;
}

/** The replay's mutable state while it runs (opaque outside this module). */
export interface Replay {
  readonly config: ReplayConfig;
  readonly plans: ReadonlyMap<string, TargetPlan>;
  readonly hub: EventHub;
  readonly sinks: readonly SimulatedSink[];
  readonly options: ReplayOptions;
  state: MonitorState;
  nowMs: number;
  startMs: number;
  tickMs: number;
  nextTickMs: number;
  observations: number;
  /** The last response of each target's polls and warm-ups, by target id. */
  readonly lastResponse: { readonly poll: Map<string, Response>; readonly warmup: Map<string, Response> };
  readonly lastFed: Map<string, FedPrice>;
  readonly seen: Set<string>;
  readonly unknown: Set<string>;
  readonly transitions: ReplayTransition[];
  readonly problems: ReplayProblem[];
  readonly prices: Map<string, BoundedSeries>;
  /** The last SSE message (the stream lines after it name its prices), decoded on first use. */
  lastSse: LastSse | null;
}

/** A recorded response. */
type Response = RecordLineOf<"response">;

/** An SSE message of the recording and, once a stream line needed it, its decoded prices (null: undecodable). */
interface LastSse {
  readonly event: string;
  readonly data: string;
  readonly at: LineOrigin;
  prices?: readonly PairPrice[] | null;
}

/** Replay `items` (a recording, in order) under `config`; never throws on bad input, every problem is in the result. */
export function replayRecording(
  items: Iterable<RecordingItem>,
  config: ReplayConfig,
  options: ReplayOptions = {},
): ReplayResult {
  let replay: Replay | null = null;
  const early: ReplayProblem[] = [];
  for (const item of items) {
    if (item.kind === "problem") {
      (replay?.problems ?? early).push({ kind: "line", message: item.reason, at: item.at });
      continue;
    }
    const { line } = item;
    if (options.fromMs !== undefined && line.atMs < options.fromMs) continue;
    if (options.toMs !== undefined && line.atMs > options.toMs) break;
    replay ??= openReplay(config, options, line.atMs, early);
    step(replay, line, item.at);
    options.onProgress?.(line.atMs);
  }
  replay ??= openReplay(config, options, options.fromMs ?? 0, early);
  return finish(replay);
}

/** The replay's state at its first line: the daemon's start, in virtual time. */
export function openReplay(
  config: ReplayConfig,
  options: ReplayOptions,
  startMs: number,
  problems: ReplayProblem[],
): Replay {
  const plans = planTargets(config.monitors, config.upstream.transport).filter(
    (plan) => options.targets?.(plan.spec) ?? true,
  );
  const calendar = createMaintenanceCalendar(config.maintenance);
  // the hub reads the replay's virtual clock (set once `replay` exists, before anything is published)
  const clock = { nowMs: (): number => startMs };
  const hub = createEventHub({
    journal: createJournal(1_024),
    nowMs: () => clock.nowMs(),
    version: VERSION,
    externalLabels: () => config.alerts.externalLabels,
    silencing: (alert) => silencingIds(calendar.silencesAt(clock.nowMs()), alert, clock.nowMs()),
  });
  const replay: Replay = {
    config,
    plans: new Map(plans.map((plan) => [plan.spec.id, plan])),
    hub,
    sinks: simulateSinks(config.sinks, startMs, sinkSpeedOf(config.upstream)),
    options,
    state: createMonitorState(),
    nowMs: startMs,
    startMs,
    tickMs: options.tickMs ?? 1_000,
    nextTickMs: startMs + (options.tickMs ?? 1_000),
    observations: 0,
    lastResponse: { poll: new Map(), warmup: new Map() },
    lastFed: new Map(),
    seen: new Set(),
    unknown: new Set(),
    transitions: [],
    problems,
    prices: new Map(),
    lastSse: null,
  };
  clock.nowMs = () => replay.nowMs;
  hub.events$.subscribe((event) => {
    if (event.type !== "alert") return;
    replay.transitions.push({ seq: event.seq, atMs: replay.nowMs, alert: event.alert });
    for (const sink of replay.sinks) sink.offer(event, replay.nowMs);
  });
  const specs = plans.map((plan) => plan.spec);
  publish(replay, retainTargets(replay.state, new Set(replay.plans.keys()), config.rules, startMs, specs));
  return replay;
}

/** Publish an evaluation's transitions on the bus, as the runner does. */
function publish(replay: Replay, evaluation: Evaluation): void {
  replay.state = evaluation.state;
  for (const transition of evaluation.transitions) replay.hub.publishAlert(transition);
}

/** Move virtual time to `atMs`, running every alert tick due on the way. */
function advanceTo(replay: Replay, atMs: number): void {
  while (replay.nextTickMs <= atMs) {
    replay.nowMs = replay.nextTickMs;
    publish(replay, tick(replay.state, replay.config.rules, replay.nowMs));
    for (const sink of replay.sinks) sink.advance(replay.nowMs);
    replay.nextTickMs += replay.tickMs;
  }
  if (atMs > replay.nowMs) replay.nowMs = atMs;
  for (const sink of replay.sinks) sink.advance(replay.nowMs);
}

/** One recorded line. */
function step(replay: Replay, line: RecordLine, at: LineOrigin): void {
  advanceTo(replay, line.atMs);
  switch (line.type) {
    case "file":
      return;
    case "start":
      // the daemon (re)started: its ticks run from here
      replay.tickMs = line.tickMs;
      replay.nextTickMs = line.atMs + line.tickMs;
      return;
    case "response":
      if (line.target !== null) replay.lastResponse[line.purpose ?? "poll"].set(line.target, line);
      return;
    case "poll":
      return replayPoll(replay, line, at);
    case "warmup":
      return replayWarmup(replay, line, at);
    case "sse":
      replay.lastSse = { event: line.event, data: line.data, at };
      return;
    case "stream":
      return replayStream(replay, line, at);
  }
}

/** The configured target a line names, or a problem (reported once per target). */
function targetOf(replay: Replay, target: string, at: LineOrigin): TargetPlan | undefined {
  const plan = replay.plans.get(target);
  if (plan !== undefined) {
    replay.seen.add(target);
    return plan;
  }
  if (!replay.unknown.has(target)) {
    replay.unknown.add(target);
    replay.problems.push({
      kind: "unknown_target",
      message: `target ${target} is in the recording but not in the config: its lines are skipped`,
      at,
      target,
    });
  }
  return undefined;
}

/** A poll outcome: decode its last response (success) or rebuild its error, then feed it as the pipeline does. */
function replayPoll(replay: Replay, line: RecordLineOf<"poll">, at: LineOrigin): void {
  const plan = targetOf(replay, line.target, at);
  if (plan === undefined || line.held === true) return;
  if (!line.ok) return feed(replay, plan, { ok: false, error: recordedFailure(line) }, line.atMs);
  const response = replay.lastResponse.poll.get(line.target);
  replay.lastResponse.poll.delete(line.target);
  if (response?.body == null) {
    replay.problems.push({
      kind: "missing_response",
      message: `a successful poll of ${line.target} has no recorded response body: skipped`,
      at,
      target: line.target,
    });
    return;
  }
  let value: unknown;
  try {
    value = decodeSnapshot(plan.spec, response.body);
  } catch (error) {
    const failure = asDecodeFailure(error);
    replay.problems.push({
      kind: "decode",
      message: `the decoder rejects the body of ${line.target}: ${failure.message} (fed as that failure)`,
      at,
      target: line.target,
    });
    return feed(replay, plan, { ok: false, error: failure }, line.atMs);
  }
  feed(replay, plan, { ok: true, value }, line.atMs);
}

/** Fold one result into the engine (a streamed target's repeated price is dropped, as the pipeline does). */
function feed(
  replay: Replay,
  plan: TargetPlan,
  result: { ok: true; value: unknown } | { ok: false; error: PmError },
  atMs: number,
): void {
  const { spec } = plan;
  if (plan.transport === "stream" && result.ok) {
    const price = result.value as PairPrice;
    if (isRepeatedPrice(replay.lastFed.get(spec.id) ?? null, price)) return;
    replay.lastFed.set(spec.id, fedPrice(price, true));
  }
  replay.observations += 1;
  if (replay.options.keepPrices === true && spec.kind === "offchain" && result.ok)
    keepPrice(replay, spec, result.value as PairPrice, atMs);
  const observation = toObservation(spec, result, atMs);
  publish(replay, observe(replay.state, observation, replay.config.rules, atMs));
}

/** Remember an off-chain price for the chart (bounded: extremes of merged buckets). */
function keepPrice(replay: Replay, spec: TargetSpec, price: PairPrice, atMs: number): void {
  let series = replay.prices.get(spec.id);
  if (series === undefined) replay.prices.set(spec.id, (series = boundedSeries()));
  series.push({ atMs, price: Number(price.price.text) });
}

/** Warm-up history: the recorded candles, cut as the daemon cut them. */
function replayWarmup(replay: Replay, line: RecordLineOf<"warmup">, at: LineOrigin): void {
  const plan = targetOf(replay, line.target, at);
  const response = replay.lastResponse.warmup.get(line.target);
  if (plan === undefined || plan.spec.kind !== "offchain" || response?.body == null) return;
  try {
    const interval = line.interval as Interval;
    // bounded as the daemon's read was, so both keep the same candles of any body
    const sinceMs = warmupSinceMs(interval, line.lookbackMs, line.asOfMs);
    const series = decodeCandleSeriesBody(response.body, undefined, sinceMs);
    const points = candlesToHistory(series, interval, line.lookbackMs, line.asOfMs);
    const observation = { kind: "history" as const, target: plan.spec, points, source: "candles" as const };
    publish(replay, observe(replay.state, observation, replay.config.rules, line.atMs));
  } catch (error) {
    replay.problems.push({
      kind: "decode",
      message: `the decoder rejects the warm-up candles of ${line.target}: ${asDecodeFailure(error).message}`,
      at,
      target: line.target,
    });
  }
}

/** The error a decoder threw, as a PmError. */
function asDecodeFailure(error: unknown): PmError {
  if (isPmError(error)) return error;
  return recordedFailure({
    type: "poll",
    atMs: 0,
    target: "",
    ok: false,
    code: "PM_ERR_UPSTREAM_DECODE",
    message: error instanceof Error ? error.message : String(error),
    retryable: false,
  });
}

/** A stream delivery: a price or the history of the last SSE message, decoded as the stream client does, or a stale fallback fed as its failure. */
function replayStream(replay: Replay, line: RecordLineOf<"stream">, at: LineOrigin): void {
  const plan = targetOf(replay, line.target, at);
  if (plan === undefined) return;
  if (line.event === "stale") {
    const error = recordedFailure({ ...line, type: "poll", ok: false });
    return feed(replay, plan, { ok: false, error }, line.atMs);
  }
  const { spec } = plan;
  const prices = ssePrices(replay);
  if (prices === null || spec.kind !== "offchain") return;
  const mine = prices.filter((price) => price.pairId === spec.pair);
  if (line.event === "history") {
    const points = mine.map((p) => ({ atMs: p.timestampMs, price: p.price }));
    const observation = { kind: "history" as const, target: spec, points };
    return publish(replay, observe(replay.state, observation, replay.config.rules, line.atMs));
  }
  const price = mine.find((p) => p.timestampMs === line.timestampMs);
  if (price !== undefined) return feed(replay, plan, { ok: true, value: price }, line.atMs);
  replay.problems.push({
    kind: "missing_response",
    message: `a streamed price of ${line.target} is not in the SSE message before it: skipped`,
    at,
    target: line.target,
  });
}

/** The prices of the last SSE message (decoded once); null, reported once, when there is none or it is undecodable. */
function ssePrices(replay: Replay): readonly PairPrice[] | null {
  const sse = replay.lastSse;
  if (sse === null) return null;
  if (sse.prices !== undefined) return sse.prices;
  try {
    const event = decodeStreamEvent({ event: sse.event === "" ? undefined : sse.event, data: sse.data });
    sse.prices = event.kind === "refused" ? [] : event.prices;
  } catch (error) {
    sse.prices = null;
    replay.problems.push({
      kind: "decode",
      message: `the stream decoder rejects an SSE message: ${asDecodeFailure(error).message}`,
      at: sse.at,
    });
  }
  return sse.prices;
}

/**
 * Feed one price of `targetId` at `atMs` (virtual time moves there first) as a poll success: the history mode's
 * entry into the same engine. A target that does not take part is skipped.
 */
export function feedPrice(replay: Replay, targetId: string, price: PairPrice, atMs: number): void {
  advanceTo(replay, atMs);
  const plan = replay.plans.get(targetId);
  if (plan === undefined) return;
  replay.seen.add(targetId);
  feed(replay, plan, { ok: true, value: price }, atMs);
}

/** Run the ticks up to `atMs` (the end of a history run). */
export function advanceReplay(replay: Replay, atMs: number): void {
  advanceTo(replay, atMs);
}

/** Drain the sinks, report configured targets the recording never mentions, and hand the result over. */
export function finish(replay: Replay): ReplayResult {
  for (const sink of replay.sinks) sink.drain();
  for (const id of [...replay.plans.keys()].sort())
    if (!replay.seen.has(id))
      replay.problems.push({
        kind: "missing_target",
        message: `target ${id} is in the config but not in the recording: its rules saw no data`,
        target: id,
      });
  return {
    startMs: replay.startMs,
    endMs: replay.nowMs,
    observations: replay.observations,
    transitions: replay.transitions,
    sinks: replay.sinks.map((sink) => sink.tally()),
    problems: replay.problems,
    prices: new Map([...replay.prices].map(([id, series]) => [id, series.points()])),
  };
}
