// Frames and payloads for the status page's unit tests, built in code (the tests own their data).
import type {
  AlertPayload,
  LifecycleEvent,
  PriceTick,
  ServerFrame,
  Silence,
  TargetView,
} from "../../web/src/types.js";

/** A firing (or resolved) BTC/USD price_change alert, with any field overridden. */
export function alert(overrides: Partial<AlertPayload> = {}): AlertPayload {
  return {
    fingerprint: "fp-btc",
    status: "firing",
    rule: "price_change",
    severity: "warning",
    labels: { pair: "BTC/USD", market: "offchain", entry_type: "spot", window: "10s" },
    summary: "BTC/USD moved +6.00% in 10s (threshold 2%)",
    value: 0.06,
    threshold: 0.02,
    startsAt: "2026-11-22T10:00:00.000Z",
    endsAt: null,
    reason: "first",
    context: {},
    ...overrides,
  };
}

/** The alert event `seq` carrying `payload`. */
export function alertEvent(seq: number, payload: AlertPayload = alert()): ServerFrame {
  return { type: "alert", seq, alert: payload };
}

/** A resolve of `payload` at `seq`. */
export function resolveEvent(seq: number, payload: AlertPayload = alert()): ServerFrame {
  return {
    type: "alert",
    seq,
    alert: { ...payload, status: "resolved", reason: "resolved", endsAt: "2026-11-22T10:05:00.000Z" },
  };
}

/** A lifecycle event. */
export function lifecycle(seq: number, event: string): LifecycleEvent {
  return { type: "lifecycle", seq, event, at: "2026-11-22T10:00:00.000Z", version: "0.1.0" };
}

/** An off-chain spot tick at `timestamp` with `price` (BTC/USD unless another pair is named). */
export function tick(timestamp: string, price: string, pair = "BTC/USD"): PriceTick {
  return {
    pair,
    market: "offchain",
    target: `offchain:${pair}:spot:median:1min`,
    price,
    numSources: 5,
    timestamp,
    observedAt: timestamp,
    entryType: "spot",
  };
}

/** An off-chain BTC/USD spot target as /api/v1/targets lists it. */
export function target(overrides: Partial<TargetView> = {}): TargetView {
  return {
    id: "offchain:BTC/USD:spot:median:1min",
    kind: "offchain",
    labels: {
      pair: "BTC/USD",
      market: "offchain",
      entry_type: "spot",
      aggregation: "median",
      interval: "1min",
    },
    periodMs: 1_000,
    lastPoll: { at: "2026-11-22T10:00:00.000Z", ok: true, consecutiveFailures: 0, error: null },
    ageMs: 500,
    latest: {
      kind: "price",
      price: "86000.5",
      comparable: true,
      at: "2026-11-22T09:59:59.500Z",
      numSources: 5,
    },
    history: [],
    ...overrides,
  };
}

/** An active silence on BTC/USD. */
export function silence(overrides: Partial<Silence> = {}): Silence {
  return {
    id: "s1",
    matchers: [{ name: "pair", value: "BTC/USD", isRegex: false, isEqual: true }],
    startsAt: "2026-11-22T10:00:00.000Z",
    endsAt: "2026-11-22T12:00:00.000Z",
    updatedAt: "2026-11-22T10:00:00.000Z",
    createdBy: "ops",
    comment: "maintenance",
    status: { state: "active" },
    ...overrides,
  };
}
