// The daemon's Pragma clients on the shared pool: metrics, recording and skipped-item counting wired in.
import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import type { AppConfig } from "./config/types.js";
import type { Metrics } from "./metrics.js";
import { createPragmaClient } from "./upstream/client.js";
import type { StreamClientDeps } from "./upstream-reload.js";
import type { Recorder } from "./record/recorder.js";
import type { SkippedItem } from "./upstream/decode.js";
import { createSkippedItemLog } from "./upstream/skip-log.js";
import type { PragmaClient } from "./upstream/types.js";
import { upstreamRequestObserver } from "./upstream-observer.js";
import type { Daemon } from "./app-daemon.js";

/** What the stream client needs besides `upstream`: the upstream actually used, the shared pool, skipped items counted. */
export function streamClientDeps(app: Daemon, dispatcher: Dispatcher): StreamClientDeps {
  const { metrics, deps } = app;
  const onSkippedItem = createSkippedItemHandler(metrics, app.log("upstream"), deps.nowMs);
  const recorder = app.recording?.recorder;
  return {
    baseUrl: app.upstreamUrl,
    dispatcher,
    random: deps.random,
    onSkippedItem,
    ...(recorder === undefined ? {} : { onMessage: (message) => recorder.sse(message) }),
  };
}

/** The Pragma client on the shared keep-alive pool, feeding the upstream latency and request metrics. */
export function createUpstreamClient(
  upstream: AppConfig["upstream"],
  options: {
    readonly baseUrl: string;
    readonly vaultBaseUrl: string;
    readonly dispatcher: Dispatcher;
    readonly metrics: Metrics;
    readonly random: () => number;
    readonly onSkippedItem: (item: SkippedItem) => void;
    readonly recorder?: Recorder;
  },
): PragmaClient {
  const { metrics, recorder } = options;
  return createPragmaClient({
    baseUrl: options.baseUrl,
    vaultBaseUrl: options.vaultBaseUrl,
    ...(upstream.apiKey === "" ? {} : { apiKey: upstream.apiKey }),
    dispatcher: options.dispatcher,
    timeoutMs: upstream.timeoutMs,
    retry: upstream.retry,
    random: options.random,
    observer: upstreamRequestObserver(metrics),
    onSkippedItem: options.onSkippedItem,
    ...(recorder === undefined ? {} : { onResponse: (sample) => recorder.response(sample) }),
  });
}

/** Count every list item the decoders skipped as malformed and log it once per burst. */
export function createSkippedItemHandler(
  metrics: Metrics,
  logger: Logger,
  nowMs: () => number,
): (item: SkippedItem) => void {
  const logSkippedItem = createSkippedItemLog({ logger, nowMs });
  return (item) => {
    metrics.upstreamSkippedItems.inc({ endpoint: item.endpoint });
    logSkippedItem(item);
  };
}
