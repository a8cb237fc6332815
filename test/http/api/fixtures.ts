// Alerts the API contract tests read: firing ones as the event hub holds them, pending ones as the engine lists them.
import type { ApiDeps } from "../../../src/http/api/index.js";
import type { AlertPayload } from "../../../src/domain/events.js";
import type { PendingAlert } from "../../../src/domain/monitor.js";
import type { AlertsDeps } from "../../../src/http/api/alerts.js";

/** An alert payload with neutral fields; `over` sets what a case is about. */
export function payload(over: Partial<AlertPayload> & Pick<AlertPayload, "fingerprint">): AlertPayload {
  return {
    status: "firing",
    rule: "price_change",
    severity: "warning",
    labels: { pair: "BTC/USD", market: "offchain", entry_type: "spot", window: "1min" },
    summary: "BTC/USD moved +5.02% in 1min (threshold 2%)",
    value: 0.0502,
    threshold: 0.02,
    startsAt: "2026-11-22T10:00:03.120Z",
    endsAt: null,
    reason: "first",
    context: { price: "86184.12" },
    ...over,
  };
}

export const FIRING: readonly AlertPayload[] = [
  payload({ fingerprint: "f-btc-warning-old", startsAt: "2026-11-22T10:00:00.000Z" }),
  payload({
    fingerprint: "f-eth-critical",
    severity: "critical",
    rule: "stale_price",
    labels: { pair: "ETH/USD", market: "offchain", entry_type: "spot", rule_id: "stale_eth" },
    startsAt: "2026-11-22T10:05:00.000Z",
    silencedBy: ["s-1"],
  }),
  payload({ fingerprint: "f-btc-warning-new", startsAt: "2026-11-22T10:03:00.000Z", reason: "repeat" }),
  payload({ fingerprint: "f-sink", rule: "sink_error", severity: "info", labels: { sink: "slack" } }),
];

export const PENDING: readonly PendingAlert[] = [
  {
    alert: payload({
      fingerprint: "p-sol-low",
      rule: "low_sources",
      labels: { pair: "SOL/USD", market: "offchain", entry_type: "spot" },
      startsAt: "2026-11-22T10:01:00.000Z",
    }),
    pendingSinceMs: Date.parse("2026-11-22T10:01:00.000Z"),
    firesAtMs: Date.parse("2026-11-22T10:11:00.000Z"),
    inhibitedBy: ["u-sol"],
  },
];

/** Alerts deps over FIRING and PENDING: one firing alert inhibited, one silenced, the pending one both. */
export const ALERTS_DEPS: AlertsDeps = {
  firingAlerts: () => FIRING,
  engineAlerts: () => ({
    pending: PENDING,
    inhibitors: (fingerprint) => (fingerprint === "f-btc-warning-new" ? ["u-btc"] : []),
  }),
  silencedBy: (alert) => (alert.labels["pair"] === "SOL/USD" ? ["s-2"] : []),
};

/** Every read route's deps answering nothing (no targets, no journal, ready): tests add the silencer. */
export const QUIET_READ_DEPS: Omit<ApiDeps, "silencer"> = {
  ...ALERTS_DEPS,
  version: "1.2.3",
  nowMs: () => 0,
  startedAtMs: () => 0,
  configGeneration: () => 0,
  cluster: () => null,
  readiness: () => ({ ready: true, reasons: [] }),
  sinks: () => [],
  upstream: () => ({ url: "http://127.0.0.1:1", simulator: true }),
  targetCount: () => 0,
  journal: { lastSeq: () => 0, oldestSeq: () => 1 },
  replay: () => ({ gap: null, events: [] }),
  targetReports: () => [],
};
