// GET /api/v1/alerts: the firing and pending alerts, filtered, most severe first, then oldest.
import { z } from "zod";
import { severityRank, type AlertPayload } from "../../domain/events.js";
import { toIso } from "../../domain/format.js";
import type { PendingAlert } from "../../domain/monitor.js";
import { ALERT_PAYLOAD_JSON } from "../../state/event-schema.js";
import { ALERT_FILTER_QUERY, alertFilterMatcher, type AlertFilter } from "./alert-filters.js";
import { defineRoute, type AnyApiRoute } from "./route.js";

/** What the alert routes read from the daemon. */
export interface AlertsDeps {
  /** Alerts firing, as last announced (the event hub's activeAlerts; `silencedBy` when muted). */
  readonly firingAlerts: () => readonly AlertPayload[];
  /** The engine's pending alerts now, and what inhibits an alert by fingerprint (both read at call time). */
  readonly engineAlerts: () => {
    readonly pending: readonly PendingAlert[];
    readonly inhibitors: (fingerprint: string) => readonly string[];
  };
  /** Ids of the silences muting an alert now (pending ones: nothing announced them); absent = none known. */
  readonly silencedBy?: (alert: AlertPayload) => readonly string[];
}

const ALERT_STATE = z.enum(["firing", "pending"]);

/** One alert of GET /alerts: the payload fields of the alert events, its state, silences and inhibitors. */
export const API_ALERT = ALERT_PAYLOAD_JSON.extend({
  status: ALERT_STATE.describe("firing, or pending (its condition holds, its `for` has not elapsed)"),
  state: ALERT_STATE.describe("the same as status"),
  startsAt: z.string().describe("firing: when it fired; pending: when it became pending"),
  firesAt: z
    .string()
    .nullable()
    .describe(
      "pending: when its `for` elapses (it fires then unless it clears); null when firing or unknown",
    ),
  silencedBy: z.array(z.string()).describe("ids of the silences muting it; empty when none"),
  inhibitedBy: z
    .array(z.string())
    .describe(
      "fingerprints of the firing upstream_error alerts on its data that hold it (neither fires, resolves nor notifies); empty when none",
    ),
});

/** The answer of GET /alerts. */
export const ALERTS_RESPONSE = z.object({ alerts: z.array(API_ALERT) });

/** One alert as the API answers it. */
export type ApiAlert = z.infer<typeof API_ALERT>;

/** Every firing and pending alert, with its silences and inhibitors, sorted (unfiltered). */
export function listAlerts(deps: AlertsDeps): readonly ApiAlert[] {
  const { pending, inhibitors } = deps.engineAlerts();
  const silencedBy = deps.silencedBy ?? (() => []);
  const firing = deps.firingAlerts().map((alert): ApiAlert => ({
    ...alert,
    status: "firing",
    state: "firing",
    firesAt: null,
    silencedBy: [...(alert.silencedBy ?? [])],
    inhibitedBy: [...inhibitors(alert.fingerprint)],
  }));
  const waiting = pending.map(({ alert, firesAtMs, inhibitedBy }): ApiAlert => ({
    ...alert,
    status: "pending",
    state: "pending",
    firesAt: firesAtMs === null ? null : toIso(firesAtMs),
    silencedBy: [...silencedBy(alert)],
    inhibitedBy: [...inhibitedBy],
  }));
  return [...firing, ...waiting].sort(bySeverityThenAge);
}

/** Most severe first, then oldest (`startsAt`); at a tie firing before pending, then by fingerprint so the order is stable. */
export function bySeverityThenAge(a: ApiAlert, b: ApiAlert): number {
  return (
    severityRank(b.severity) - severityRank(a.severity) ||
    compareText(a.startsAt, b.startsAt) ||
    (a.state === b.state ? 0 : a.state === "firing" ? -1 : 1) ||
    compareText(a.fingerprint, b.fingerprint)
  );
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The alerts of `filter`, plus the `state` filter only this route has. */
function filtered(
  deps: AlertsDeps,
  filter: AlertFilter & { readonly state?: string | undefined },
): ApiAlert[] {
  const matches = alertFilterMatcher(filter);
  return listAlerts(deps).filter(
    (alert) => (filter.state === undefined || alert.state === filter.state) && matches(alert),
  );
}

/** GET /alerts. */
export function alertsRoute(deps: AlertsDeps): AnyApiRoute {
  return defineRoute({
    method: "GET",
    path: "/alerts",
    summary: "The firing and pending alerts, most severe first, then oldest.",
    tag: "alerts",
    query: z.strictObject({
      ...ALERT_FILTER_QUERY,
      state: ALERT_STATE.optional().describe("only firing or only pending alerts"),
    }),
    responses: {
      200: { description: "the alerts that match every filter given", schema: ALERTS_RESPONSE },
      400: { description: "a query parameter is invalid" },
    },
    handle: ({ query }) => ({ status: 200, body: { alerts: filtered(deps, query) } }),
  });
}
