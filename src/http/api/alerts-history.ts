// GET /api/v1/alerts/history: the journal's alert (and, on request, lifecycle) events after a seq, oldest first, paginated.
import { z } from "zod";
import type { JournaledEvent } from "../../domain/events.js";
import type { EventSource } from "../../pipeline/event-hub.js";
import { ALERT_PAYLOAD_JSON, LIFECYCLE_EVENT, SEQ } from "../../state/event-schema.js";
import { ALERT_FILTER_QUERY, alertFilterMatcher, nameList } from "./alert-filters.js";
import { defineRoute, type AnyApiRoute } from "./route.js";

/** Events per page unless `limit` says otherwise, and the most one page may hold. */
export const HISTORY_DEFAULT_LIMIT = 100;
export const HISTORY_MAX_LIMIT = 1000;

/** What the history route reads: the journal. */
export type HistoryDeps = Pick<EventSource, "replay">;

/** One journaled event as the history answers it (the same shape as the WebSocket's and the journal's). */
export const HISTORY_EVENT = z.discriminatedUnion("type", [
  z.object({ type: z.literal("alert"), seq: SEQ, alert: ALERT_PAYLOAD_JSON }),
  LIFECYCLE_EVENT,
]);

/** The answer of GET /alerts/history. */
export const HISTORY_RESPONSE = z.object({
  events: z.array(HISTORY_EVENT).describe("oldest first"),
  nextSince: z
    .number()
    .int()
    .nonnegative()
    .describe("pass as `since` for the next page (the seq of the last event looked at)"),
  more: z.boolean().describe("true when the page is full and later events may follow"),
  gap: z
    .object({ from: z.number().int(), to: z.number().int() })
    .nullable()
    .describe("seqs after `since` the journal no longer holds (dropped from its ring); null when none"),
});

/** The query of GET /alerts/history. */
const HISTORY_QUERY = z.strictObject({
  since: z.coerce
    .number({ error: "must be a number" })
    .int("must be an integer")
    .nonnegative("must be ≥ 0")
    .max(Number.MAX_SAFE_INTEGER)
    .default(0)
    .describe("return events with a seq above this one (0: from the oldest held)"),
  limit: z.coerce
    .number({ error: "must be a number" })
    .int("must be an integer")
    .min(1, "must be ≥ 1")
    .max(HISTORY_MAX_LIMIT, `must be ≤ ${HISTORY_MAX_LIMIT}`)
    .default(HISTORY_DEFAULT_LIMIT)
    .describe(`events per page, at most ${HISTORY_MAX_LIMIT}`),
  type: nameList("alert (default), lifecycle, or both: alert,lifecycle").pipe(
    z.array(z.enum(["alert", "lifecycle"], { error: "must be alert or lifecycle" })).optional(),
  ),
  ...ALERT_FILTER_QUERY,
});

/** One page of history (HISTORY_RESPONSE, with the journal's own event types). */
export interface HistoryPage {
  readonly events: readonly JournaledEvent[];
  readonly nextSince: number;
  readonly more: boolean;
  readonly gap: { readonly from: number; readonly to: number } | null;
}

/** The page of the journal after `since`: up to `limit` wanted events, where to go on from, and any gap. */
export function historyPage(deps: HistoryDeps, query: z.output<typeof HISTORY_QUERY>): HistoryPage {
  const { since, limit } = query;
  const types = new Set(query.type ?? ["alert"]);
  const matches = alertFilterMatcher(query);
  // lifecycle events are not alerts: the alert filters do not apply to them
  const wanted = (event: JournaledEvent): boolean =>
    types.has(event.type) && (event.type === "lifecycle" || matches(event.alert));
  const replay = deps.replay(since);
  const events: JournaledEvent[] = [];
  let nextSince = since;
  for (const event of replay.events) {
    if (events.length === limit) return { events, nextSince, more: true, gap: replay.gap };
    nextSince = event.seq;
    if (wanted(event)) events.push(event);
  }
  return { events, nextSince, more: false, gap: replay.gap };
}

/** GET /alerts/history. */
export function alertsHistoryRoute(deps: HistoryDeps): AnyApiRoute {
  return defineRoute({
    method: "GET",
    path: "/alerts/history",
    summary: "Journaled alert transitions (and lifecycle events on request) after a seq, oldest first.",
    tag: "alerts",
    query: HISTORY_QUERY,
    responses: {
      200: { description: "one page of the journal", schema: HISTORY_RESPONSE },
      400: { description: "a query parameter is invalid" },
    },
    handle: ({ query }) => ({ status: 200, body: historyPage(deps, query) }),
  });
}
