// The upstream client's request observer as metrics: latency and requests by endpoint and status, children bound once per label set.
import type { CounterChild, HistogramChild } from "./metric-children.js";
import type { Metrics } from "./metrics.js";
import type { EndpointName, RequestObserver } from "./upstream/types.js";

/** Observe each upstream attempt into `pragma_monitor_upstream_*` without a label lookup per request. */
export function upstreamRequestObserver(metrics: Metrics): RequestObserver {
  // bounded by endpoints × (HTTP statuses and error codes seen), as the series themselves are
  const latency = new Map<EndpointName, HistogramChild>();
  // endpoint → status (a number) or error code → counter: no label string built per request
  const requests = new Map<EndpointName, Map<number | string | null, CounterChild>>();
  return (sample) => {
    const { endpoint } = sample;
    let histogram = latency.get(endpoint);
    if (histogram === undefined) {
      histogram = metrics.upstreamLatency.childFor({ endpoint });
      latency.set(endpoint, histogram);
    }
    histogram.observe(sample.durationMs / 1000);
    const status = sample.status ?? sample.errorCode;
    let byStatus = requests.get(endpoint);
    if (byStatus === undefined) {
      byStatus = new Map();
      requests.set(endpoint, byStatus);
    }
    let counter = byStatus.get(status);
    if (counter === undefined) {
      counter = metrics.upstreamRequests.childFor({ endpoint, status: String(status) });
      byStatus.set(status, counter);
    }
    counter.inc();
  };
}
