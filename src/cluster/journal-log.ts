// The cluster's event log, pure parts: message ids, where a member starts reading, and a stream message as an event.
import type { JournaledEvent } from "../domain/events.js";
import { parseJournaledEvent } from "../state/event-schema.js";
import type { UnnumberedEvent } from "../state/journal.js";

/**
 * The message id of the `count`-th event a process (`origin`: `<memberId>/<incarnation>`) publishes: a retry
 * reuses it, so the server's duplicate window drops the copy. It names what it carries (the alert's fingerprint
 * and transition, or the lifecycle phase) for whoever reads the stream.
 */
export function messageId(origin: string, count: number, event: UnnumberedEvent): string {
  const what =
    event.type === "alert"
      ? `alert:${event.alert.fingerprint}:${event.alert.status}:${event.alert.reason}`
      : `lifecycle:${event.event}`;
  return `${origin}:${count}:${what}`;
}

/** Whether a message id was minted by `origin` (this process published the event). */
export function isFromOrigin(id: string | undefined, origin: string): boolean {
  return id !== undefined && id.startsWith(`${origin}:`);
}

/**
 * The first stream seq a member reads at start: the last `capacity` events the stream holds (what a single
 * daemon's journal would hold), or the first one when it holds fewer; 1 on an empty stream.
 */
export function startSeq(
  stream: { readonly firstSeq: number; readonly lastSeq: number },
  capacity: number,
): number {
  return Math.max(1, stream.firstSeq, stream.lastSeq - capacity + 1);
}

/** A stream message (its JSON payload and stream seq) as the journaled event it carries, or undefined when malformed. */
export function eventOfMessage(payload: string, seq: number): JournaledEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload) as unknown;
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  return parseJournaledEvent({ ...value, seq });
}
