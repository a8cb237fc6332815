// What a reload does with `upstream`: the transport default and the stream settings apply live (targets switch
// between poll and stream in place, the stream reconnects); the rest of the section changes only on restart.
import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import type { AppConfig } from "./config/types.js";
import type { MonitorRunner, MonitorRunnerDeps } from "./pipeline/monitor-runner.js";
import type { SkippedItem } from "./upstream/decode.js";
import {
  multiStream$,
  streamReconnectBackoff,
  type MultiStreamOptions,
} from "./upstream/multi-stream-client.js";

type UpstreamConfig = AppConfig["upstream"];

/** The keys of `upstream` a reload applies without a restart. */
const LIVE_KEYS: ReadonlySet<string> = new Set(["transport", "stream"]);

/** Which `upstream` keys differ: applied live (`transport`, `stream.*`) or only on restart (the rest), as dotted names. */
export interface UpstreamChanges {
  readonly live: readonly string[];
  readonly restartOnly: readonly string[];
}

/** Compare two `upstream` sections key by key (one level into `stream`; values never appear: `apiKey` is a secret). */
export function diffUpstream(previous: UpstreamConfig, next: UpstreamConfig): UpstreamChanges {
  const live: string[] = [];
  const restartOnly: string[] = [];
  for (const key of Object.keys(next) as (keyof UpstreamConfig)[]) {
    if (JSON.stringify(previous[key]) === JSON.stringify(next[key])) continue;
    if (!LIVE_KEYS.has(key)) restartOnly.push(`upstream.${key}`);
    else if (key === "transport") live.push("upstream.transport");
  }
  for (const key of Object.keys(next.stream) as (keyof UpstreamConfig["stream"])[])
    if (previous.stream[key] !== next.stream[key]) live.push(`upstream.stream.${key}`);
  return { live, restartOnly };
}

/** What the stream client needs besides the `upstream` section: where, over which pool, and its hooks. */
export interface StreamClientDeps {
  readonly baseUrl: string;
  readonly dispatcher: Dispatcher;
  readonly random: () => number;
  readonly onSkippedItem: (item: SkippedItem) => void;
  /** Told of each SSE message as received (the recorder). */
  readonly onMessage?: MultiStreamOptions["onMessage"];
}

/** How `transport: stream` targets reach the SSE stream: multiStream$ on the shared pool, judged by `upstream.stream`. */
export function streamSettingsOf(
  upstream: UpstreamConfig,
  deps: StreamClientDeps,
): NonNullable<MonitorRunnerDeps["stream"]> {
  const { stream, apiKey, timeoutMs, transport } = upstream;
  return {
    defaultTransport: transport,
    staleIntervals: stream.staleIntervals,
    recoverEvents: stream.recoverEvents,
    maxPairsPerConnection: stream.maxPairsPerConnection,
    componentsPeriodMs: stream.componentsPeriodMs,
    open: (pairs, interval, silenceMs) =>
      multiStream$({
        baseUrl: deps.baseUrl,
        ...(apiKey === "" ? {} : { apiKey }),
        dispatcher: deps.dispatcher,
        pairs,
        interval,
        historicalPrices: stream.historicalPrices,
        connectTimeoutMs: timeoutMs,
        silenceMs,
        reconnect: streamReconnectBackoff(stream.maxReconnectDelayMs),
        random: deps.random,
        onSkippedItem: deps.onSkippedItem,
        ...(deps.onMessage === undefined ? {} : { onMessage: deps.onMessage }),
      }),
  };
}

/**
 * Apply a reload's live `upstream` changes to the runner before it re-plans its targets, and say what changed:
 * the stream client restarts with the new settings; the restart-only keys keep their running values (also for
 * the stream: its URL, key and timeout stay those the daemon started with). Returns the restart-only keys.
 */
export function reloadUpstream(
  runner: MonitorRunner | undefined,
  previous: UpstreamConfig,
  next: UpstreamConfig,
  deps: StreamClientDeps & { readonly logger: Logger },
): readonly string[] {
  const changes = diffUpstream(previous, next);
  if (changes.live.length === 0 || runner === undefined) return changes.restartOnly;
  const applied = { ...previous, transport: next.transport, stream: next.stream };
  runner.reconfigureStream(streamSettingsOf(applied, deps));
  deps.logger.info(
    { keys: changes.live, transport: next.transport },
    "upstream transport and stream settings reloaded: the stream reconnects",
  );
  return changes.restartOnly;
}
