// GET /api/v1/targets: every monitored target with its latest poll, data age, latest value and recent history.
import { z } from "zod";
import { toIso } from "../../domain/format.js";
import { describeTargetLabels, type LatestValue } from "../../domain/target-view.js";
import type { TargetReport } from "../../pipeline/target-report.js";
import { defineRoute, type AnyApiRoute } from "./route.js";
import { nameList } from "./alert-filters.js";
import { TARGETS_RESPONSE, TARGET_KIND, type TargetLatest, type TargetView } from "./targets-schema.js";

/** Most history points per target (sparklines). */
export const TARGET_MAX_POINTS = 120;

/** What the targets route reads: the running targets, their history bounded to `maxPoints`. */
export interface TargetsDeps {
  readonly targetReports: (maxPoints: number) => readonly TargetReport[];
}

/** An ISO time ("invalid" for a time that is not one, rather than a thrown RangeError). */
const iso = toIso;
/** An ISO time, or null for a time that is unknown or not a time. */
const isoOrNull = (ms: number | null): string | null =>
  ms === null || !Number.isFinite(ms) ? null : toIso(ms);

/** The latest value as the API spells it (ISO times). */
function latestView(latest: LatestValue): TargetLatest {
  switch (latest.kind) {
    case "price":
      return {
        kind: "price",
        price: latest.price,
        comparable: latest.comparable,
        at: iso(latest.atMs),
        numSources: latest.numSources,
      };
    case "publishers":
      return {
        kind: "publishers",
        publishers: latest.publishers,
        feeds: latest.feeds,
        newestUpdateAt: isoOrNull(latest.newestUpdateMs),
      };
    case "funding":
      return { kind: "funding", hourlyRate: latest.hourlyRate, at: iso(latest.atMs) };
    case "vault":
      return latest;
  }
}

/** One report as the API answers it. */
export function targetView(report: TargetReport): TargetView {
  const { spec, lastPoll, data } = report;
  const error = lastPoll?.error ?? null;
  return {
    id: spec.id,
    kind: spec.kind,
    labels: { ...describeTargetLabels(spec) },
    periodMs: report.periodMs,
    lastPoll:
      lastPoll === null
        ? null
        : {
            at: iso(lastPoll.endedAtMs),
            ok: lastPoll.ok,
            durationMs: lastPoll.durationMs,
            consecutiveFailures: lastPoll.consecutiveFailures,
            error: error === null ? null : { code: error.code, message: error.message },
          },
    lastSuccessAt: isoOrNull(data?.lastSuccessMs ?? null),
    ageMs: report.ageMs,
    nextPollAt: isoOrNull(report.nextPollAtMs),
    latest: data?.latest == null ? null : latestView(data.latest),
    history: (data?.history ?? [])
      .filter((point) => Number.isFinite(point.atMs) && Number.isFinite(point.value))
      .map((point) => ({ at: iso(point.atMs), value: point.value })),
  };
}

/** GET /targets. */
export function targetsRoute(deps: TargetsDeps): AnyApiRoute {
  return defineRoute({
    method: "GET",
    path: "/targets",
    summary: "Every monitored target: latest poll, data age, latest value and recent history.",
    tag: "targets",
    query: z.strictObject({
      kind: nameList("target kinds: offchain, onchain, publishers, funding, vault; any of them matches").pipe(
        z.array(TARGET_KIND).optional(),
      ),
      points: z.coerce
        .number({ error: "must be a number" })
        .int("must be an integer")
        .min(0, "must be ≥ 0")
        .max(TARGET_MAX_POINTS, `must be ≤ ${TARGET_MAX_POINTS}`)
        .default(TARGET_MAX_POINTS)
        .describe(`history points per target, at most ${TARGET_MAX_POINTS} (0: none)`),
    }),
    responses: {
      200: { description: "the targets, sorted by id", schema: TARGETS_RESPONSE },
      400: { description: "a query parameter is invalid" },
    },
    handle: ({ query }) => {
      const kinds = query.kind === undefined ? null : new Set<string>(query.kind);
      const reports = deps.targetReports(query.points);
      const targets = reports.filter((report) => kinds === null || kinds.has(report.spec.kind));
      return { status: 200, body: { targets: targets.map(targetView) } };
    },
  });
}
