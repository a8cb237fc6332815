// Generic JSON webhook renderer: a group body (or the DESIGN §3 event verbatim), signed with HMAC-SHA256 over "<timestamp>.<body>".
import { createHmac } from "node:crypto";
import type { ChatMessage, GroupMessage, RenderedRequest } from "./types.js";

/** Header names of the generic webhook (documented in docs/webhooks.md). */
export const WEBHOOK_HEADERS = {
  signature: "x-signature-256",
  timestamp: "x-pragma-timestamp",
  delivery: "x-pragma-delivery",
} as const;

/** Hex HMAC-SHA256 of `${timestampS}.${rawBody}` with `secret`. */
export function signWebhook(secret: string, timestampS: number, rawBody: string): string {
  return createHmac("sha256", secret).update(`${timestampS}.${rawBody}`).digest("hex");
}

/**
 * Render the event (grouping off) or a group notification, with signature headers. The group body is
 * `{"type":"group","groupKey","status","repeat","groupLabels","commonLabels","count","seqs","events","alerts"}`:
 * `events` are the §3 events it delivers (each `seq` once, over all notifications), `alerts` every alert of
 * the group with its state since the last notification. Signed at send time, so a retried delivery carries
 * a fresh timestamp but the same delivery id.
 */
export function renderWebhook(
  message: ChatMessage,
  options: { readonly secret: string; readonly nowMs: number; readonly deliveryId: string },
): RenderedRequest {
  const body = message.kind === "alert" ? JSON.stringify(message.event) : JSON.stringify(groupBody(message));
  const timestampS = Math.floor(options.nowMs / 1000);
  return {
    body,
    headers: {
      "content-type": "application/json",
      [WEBHOOK_HEADERS.timestamp]: String(timestampS),
      [WEBHOOK_HEADERS.signature]: `sha256=${signWebhook(options.secret, timestampS, body)}`,
      [WEBHOOK_HEADERS.delivery]: options.deliveryId,
    },
  };
}

/** The webhook body of a group notification (documented in docs/webhooks.md). */
function groupBody(message: GroupMessage): Readonly<Record<string, unknown>> {
  return {
    type: "group",
    groupKey: message.key,
    status: message.status,
    repeat: message.repeat,
    groupLabels: message.labels,
    commonLabels: message.commonLabels,
    count: message.events.length,
    // Every event's seq, so a receiver deduplicating by seq can skip the ones it already processed.
    seqs: message.events.map((event) => event.seq),
    events: message.events,
    alerts: message.alerts,
  };
}
