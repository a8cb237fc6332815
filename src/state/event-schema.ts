// The journaled events as read back from disk, described with zod: a line that parses as JSON is still untrusted.
import { z } from "zod";
import {
  LIFECYCLE_PHASES,
  RULE_KINDS,
  SEVERITIES,
  type AlertEvent,
  type AlertPayload,
  type JournaledEvent,
} from "../domain/events.js";

/** The fields of an alert payload as JSON (the API documents its answers with it). */
export const ALERT_PAYLOAD_JSON = z.object({
  fingerprint: z.string(),
  status: z.enum(["firing", "resolved"]),
  rule: z.enum(RULE_KINDS),
  severity: z.enum(SEVERITIES),
  labels: z.record(z.string(), z.string()),
  summary: z.string(),
  value: z.number().nullable(),
  threshold: z.number().nullable(),
  startsAt: z.string(),
  endsAt: z.string().nullable(),
  reason: z.enum(["first", "repeat", "resolved"]),
  context: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  silencedBy: z.array(z.string()).optional(),
  causedBy: z
    .string()
    .optional()
    .describe(
      "fingerprint of the firing cause alert this one is a child of (not notified on its own); absent when none",
    ),
});

/** An alert payload as announced (journal lines, a checkpoint's last announcement): an absent `silencedBy` or `causedBy` stays absent. */
export const ALERT_PAYLOAD = ALERT_PAYLOAD_JSON.transform((parsed): AlertPayload => {
  const { silencedBy, causedBy, ...rest } = parsed;
  const muted = silencedBy === undefined ? rest : { ...rest, silencedBy };
  return causedBy === undefined ? muted : { ...muted, causedBy };
});

/** An event's seq. */
export const SEQ = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** A lifecycle event as journaled (and served by the API's history). */
export const LIFECYCLE_EVENT = z.object({
  type: z.literal("lifecycle"),
  seq: SEQ,
  event: z.enum(LIFECYCLE_PHASES),
  at: z.string(),
  version: z.string(),
  detail: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});

/** One journal line: an alert transition or a lifecycle event, each with its seq. */
const JOURNALED_EVENT = z.discriminatedUnion("type", [
  z.object({ type: z.literal("alert"), seq: SEQ, alert: ALERT_PAYLOAD }),
  LIFECYCLE_EVENT,
]);

/** `value` as a journaled event when it is a complete one, else undefined (a damaged line). */
export function parseJournaledEvent(value: unknown): JournaledEvent | undefined {
  const parsed = JOURNALED_EVENT.safeParse(value);
  if (!parsed.success) return undefined;
  const event = parsed.data;
  if (event.type === "alert") return event;
  // an absent detail stays absent (the event type has no `detail: undefined`)
  const { detail, ...rest } = event;
  return detail === undefined ? rest : { ...rest, detail };
}

/** True when `value` is a complete alert event (an outbox payload read back from disk). */
export function isAlertEvent(value: unknown): value is AlertEvent {
  return parseJournaledEvent(value)?.type === "alert";
}
