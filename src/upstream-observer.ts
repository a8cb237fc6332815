// The upstream client's request observer as metrics: latency and requests by endpoint and status, children bound once per label set.
import type { CounterChild } from "./metric-children.js";
import type { Metrics } from "./metrics.js";
import type { EndpointName, RequestObserver } from "./upstream/types.js";

/** Observe each upstream attempt into `pragma_monitor_upstream_*` without a label lookup per request. */
export function upstreamRequestObserver(metrics: Metrics): RequestObserver {
  // bounded by endpoints × (HTTP statuses and error codes seen), as the series themselves are
  const latency = new Map<EndpointName, { observe(seconds: number): void }>();
  const requests = new Map<string, CounterChild>();
  return (sample) => {
    const { endpoint } = sample;
    let histogram = latency.get(endpoint);
    if (histogram === undefined) {
      histogram = metrics.upstreamLatency.labels({ endpoint });
      latency.set(endpoint, histogram);
    }
    histogram.observe(sample.durationMs / 1000);
    const status = String(sample.status ?? sample.errorCode);
    const key = `${endpoint} ${status}`;
    let counter = requests.get(key);
    if (counter === undefined) {
      counter = metrics.upstreamRequests.childFor({ endpoint, status });
      requests.set(key, counter);
    }
    counter.inc();
  };
}
