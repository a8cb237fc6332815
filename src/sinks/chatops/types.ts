// Shared types of the chat-ops sinks: what gets rendered and what a renderer returns.
import type { AlertEvent, AlertPayload } from "../../domain/events.js";
import type { GroupAlert } from "./group-schedule.js";

/** One alert transition to send, exactly as published on the bus (DESIGN §3); grouping off. */
export interface AlertMessage {
  readonly kind: "alert";
  readonly event: AlertEvent;
}

/** One group notification: every alert of the group with its state since the group's last notification. */
export interface GroupMessage {
  readonly kind: "group";
  /** Stable per group, e.g. `{}` or `{pair="BTC/USD"}` (PagerDuty's dedup_key). */
  readonly key: string;
  /** The groupBy labels' values. */
  readonly labels: Readonly<Record<string, string>>;
  /** Labels every listed alert has with the same value (Alertmanager's commonLabels). */
  readonly commonLabels: Readonly<Record<string, string>>;
  /** `resolved` once every alert of the group is. */
  readonly status: "firing" | "resolved";
  /** Most severe first (firing before resolved). */
  readonly alerts: readonly GroupAlert[];
  /** The transitions this notification delivers, oldest first (none for a repeat). */
  readonly events: readonly AlertEvent[];
  /** Nothing changed since the last notification: the group's periodic reminder. */
  readonly repeat: boolean;
}

/** Alertmanager only: the transitions waiting, posted as one array (Alertmanager groups them itself). */
export interface BatchMessage {
  readonly kind: "batch";
  readonly events: readonly AlertEvent[];
}

/** Alertmanager only: the periodic re-send of every alert still firing. */
export interface RefreshMessage {
  readonly kind: "refresh";
  readonly alerts: readonly AlertPayload[];
}

/** What a chat renderer accepts. */
export type ChatMessage = AlertMessage | GroupMessage;
/** What the Alertmanager renderer accepts. */
export type AnyMessage = ChatMessage | BatchMessage | RefreshMessage;

/** A rendered HTTP request body and its headers (the URL comes from the sink config). */
export interface RenderedRequest {
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}
