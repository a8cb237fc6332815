// Shared types of the chat-ops sinks: what gets rendered and what a renderer returns.
import type { AlertEvent, AlertPayload } from "../../domain/events.js";

/** One alert transition to send, exactly as published on the bus (DESIGN §3). */
export interface AlertMessage {
  readonly kind: "alert";
  readonly event: AlertEvent;
}

/** Several rate-limited transitions coalesced into one message, oldest first. */
export interface DigestMessage {
  readonly kind: "digest";
  readonly events: readonly AlertEvent[];
}

/** Alertmanager only: the periodic re-send of every alert still firing. */
export interface RefreshMessage {
  readonly kind: "refresh";
  readonly alerts: readonly AlertPayload[];
}

/** What a chat renderer accepts. */
export type ChatMessage = AlertMessage | DigestMessage;
/** What the Alertmanager renderer accepts. */
export type AnyMessage = ChatMessage | RefreshMessage;

/** A rendered HTTP request body and its headers (the URL comes from the sink config). */
export interface RenderedRequest {
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}
