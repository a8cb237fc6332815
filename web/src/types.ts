// The wire shapes the page reads and writes: WebSocket protocol 1 (docs/websocket.md) and the /api/v1 answers.
// Declared here, not imported from src/: the page ships alone, and test/web/contract.test.ts checks these against
// the daemon's own types so the two cannot drift apart silently.

export type Severity = "info" | "warning" | "critical";

/** One alert transition or a firing alert (DESIGN §3). */
export interface AlertPayload {
  readonly fingerprint: string;
  readonly status: "firing" | "resolved";
  readonly rule: string;
  readonly severity: Severity;
  readonly labels: Readonly<Record<string, string>>;
  readonly summary: string;
  readonly value: number | null;
  readonly threshold: number | null;
  readonly startsAt: string;
  readonly endsAt: string | null;
  readonly reason: "first" | "repeat" | "resolved";
  readonly context: Readonly<Record<string, string | number | boolean | null>>;
  /** Silences (and maintenance windows) keeping it from the chat-ops sinks; absent when none. */
  readonly silencedBy?: readonly string[];
  /** Fingerprint of the cause alert this one is a child of (not notified on its own while that fires). */
  readonly causedBy?: string;
}

/** A live price of one target (not journaled, no seq). */
export interface PriceTick {
  readonly pair: string;
  readonly market: "offchain" | "onchain";
  readonly target: string;
  readonly price: string;
  readonly numSources: number;
  readonly timestamp: string;
  readonly observedAt: string;
  readonly entryType?: string;
  readonly network?: string;
}

/** A journaled alert transition. */
export interface AlertEvent {
  readonly type: "alert";
  readonly seq: number;
  readonly alert: AlertPayload;
}

/** A journaled lifecycle event of the daemon or of a silence. */
export interface LifecycleEvent {
  readonly type: "lifecycle";
  readonly seq: number;
  /** started, config_reloaded, stopping, silence_created, silence_expired (others are shown as they come). */
  readonly event: string;
  readonly at: string;
  readonly version: string;
  readonly detail?: Readonly<Record<string, string | number | boolean>>;
}

/** Events with a seq: replayable from the journal. */
export type JournaledEvent = AlertEvent | LifecycleEvent;

/** Every frame the server sends (docs/websocket.md). */
export type ServerFrame =
  | { readonly type: "hello"; readonly protocol: number; readonly version: string; readonly seq: number }
  | {
      readonly type: "subscribed";
      readonly id: string | number | null;
      readonly seq: number;
      readonly active: readonly AlertPayload[];
    }
  | {
      readonly type: "snapshot";
      readonly id: string | number | null;
      readonly seq: number;
      readonly active: readonly AlertPayload[];
      readonly prices: readonly PriceTick[];
    }
  | { readonly type: "pong"; readonly id: string | number | null; readonly seq: number }
  | { readonly type: "heartbeat"; readonly seq: number }
  | { readonly type: "gap"; readonly from: number; readonly to: number }
  | {
      readonly type: "error";
      readonly id: string | number | null;
      readonly code: string;
      readonly message: string;
    }
  | JournaledEvent
  | { readonly type: "price"; readonly tick: PriceTick };

/** What the page sends. */
export type ClientMessage =
  | {
      readonly op: "subscribe";
      readonly id: string;
      readonly channels: readonly ("alerts" | "prices" | "lifecycle")[];
      readonly since?: number;
    }
  | { readonly op: "snapshot"; readonly id: string }
  | { readonly op: "ping"; readonly id: string };

/** One label matcher, Alertmanager API v2. */
export interface SilenceMatcher {
  readonly name: string;
  readonly value: string;
  readonly isRegex: boolean;
  readonly isEqual: boolean;
}

/** A silence as `GET /api/v1/silences` lists it (maintenance windows have ids `maintenance:<name>`). */
export interface Silence {
  readonly id: string;
  readonly matchers: readonly SilenceMatcher[];
  readonly startsAt: string;
  readonly endsAt: string;
  readonly updatedAt: string;
  readonly createdBy: string;
  readonly comment: string;
  readonly status: { readonly state: "active" | "pending" | "expired" };
}

/** The body of `POST /api/v1/silences`. */
export interface NewSilence {
  readonly matchers: readonly SilenceMatcher[];
  readonly startsAt: string;
  readonly endsAt: string;
  readonly createdBy: string;
  readonly comment: string;
}

/** The latest value of a target, by what it measures (`GET /api/v1/targets`). */
export type TargetLatest =
  | {
      readonly kind: "price";
      readonly price: string;
      readonly comparable: boolean;
      readonly at: string;
      readonly numSources: number;
    }
  | {
      readonly kind: "publishers";
      readonly publishers: number;
      readonly feeds: number;
      readonly newestUpdateAt: string | null;
    }
  | { readonly kind: "funding"; readonly hourlyRate: number; readonly at: string }
  | {
      readonly kind: "vault";
      readonly status: string;
      readonly sharePrice: string;
      readonly tvl: string;
      readonly depositsPaused: boolean | null;
    };

/** One point of a target's history (sparklines). */
export interface HistoryPoint {
  readonly at: string;
  readonly value: number;
}

/** One monitored target as `GET /api/v1/targets` answers it (the fields the page reads). */
export interface TargetView {
  readonly id: string;
  readonly kind: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly periodMs: number;
  readonly lastPoll: {
    readonly at: string;
    readonly ok: boolean;
    readonly consecutiveFailures: number;
    readonly error: { readonly code: string; readonly message: string } | null;
  } | null;
  readonly ageMs: number | null;
  readonly latest: TargetLatest | null;
  readonly history: readonly HistoryPoint[];
}

/** One chat-ops sink's health (`GET /api/v1/status`). */
export interface SinkStatus {
  readonly name: string;
  readonly kind: string;
  readonly running: boolean;
  readonly failing: boolean;
  readonly pending: number;
  readonly lastError: string | null;
}

/** The daemon's status (`GET /api/v1/status`, the fields the page reads). */
export interface StatusView {
  readonly version: string;
  readonly startedAt: string;
  readonly readiness: { readonly ready: boolean; readonly reasons: readonly string[] };
  readonly upstream: { readonly url: string; readonly simulator: boolean };
  readonly sinks: readonly SinkStatus[];
}
