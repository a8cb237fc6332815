// GET /api/v1/status: version, uptime, config generation, readiness, sinks, upstream, counts and the journal's range.
import { z } from "zod";
import { redactUrl } from "../../config/redact.js";
import { toIso } from "../../domain/format.js";
import type { Readiness } from "../../domain/readiness.js";
import type { EventSource } from "../../pipeline/event-hub.js";
import { listAlerts, type AlertsDeps } from "./alerts.js";
import { defineRoute, type AnyApiRoute } from "./route.js";
import { STATUS_RESPONSE, type STATUS_CLUSTER, type STATUS_SINK, type StatusView } from "./status-schema.js";

/** What the status route reads from the daemon (besides the alerts, for the counts). */
export interface StatusDeps extends AlertsDeps {
  readonly version: string;
  /** The daemon's (wall) clock. */
  readonly nowMs: () => number;
  /** When the daemon started (its clock). */
  readonly startedAtMs: () => number;
  /** 0 for the config the daemon started with, +1 per successful reload. */
  readonly configGeneration: () => number;
  /** What /readyz answers. */
  readonly readiness: () => Readiness;
  /** Every chat-ops sink's health (the sinks' own status). */
  readonly sinks: () => readonly z.input<typeof STATUS_SINK>[];
  /** The upstream polled (unredacted: the route redacts it) and whether it is the embedded simulator. */
  readonly upstream: () => { readonly url: string; readonly simulator: boolean };
  readonly targetCount: () => number;
  readonly journal: Pick<EventSource, "lastSeq" | "oldestSeq">;
  /** Cluster mode's membership, leases and config generation; null when it is off. */
  readonly cluster: () => ClusterInput | null;
}

type ClusterView = z.infer<typeof STATUS_CLUSTER>;
type MemberView = ClusterView["members"][number];

/** The cluster's status as cluster mode builds it (read-only lists). */
export type ClusterInput = Omit<ClusterView, "members"> & {
  readonly members: readonly (Omit<MemberView, "keys"> & { readonly keys: readonly string[] })[];
};

/** The cluster's status with its lists copied for the answer. */
function clusterView(cluster: ClusterInput | null): ClusterView | null {
  if (cluster === null) return null;
  return {
    ...cluster,
    members: cluster.members.map((member) => ({ ...member, keys: [...member.keys] })),
  };
}

/** The status now. */
export function statusView(deps: StatusDeps): StatusView {
  const nowMs = deps.nowMs();
  const startedAtMs = deps.startedAtMs();
  const readiness = deps.readiness();
  const upstream = deps.upstream();
  const alerts = listAlerts(deps);
  const count = (holds: (alert: (typeof alerts)[number]) => boolean): number => alerts.filter(holds).length;
  return {
    version: deps.version,
    startedAt: toIso(startedAtMs),
    uptimeMs: Math.max(0, nowMs - startedAtMs),
    configGeneration: deps.configGeneration(),
    readiness: { ready: readiness.ready, reasons: [...readiness.reasons] },
    upstream: { url: redactUrl(upstream.url), simulator: upstream.simulator },
    sinks: deps.sinks().map((sink) => ({
      name: sink.name,
      kind: sink.kind,
      running: sink.running,
      failing: sink.failing,
      pending: sink.pending,
      consecutiveFailures: sink.consecutiveFailures,
      lastError: sink.lastError,
      groups: sink.groups,
    })),
    counts: {
      targets: deps.targetCount(),
      firing: count((alert) => alert.state === "firing"),
      pending: count((alert) => alert.state === "pending"),
      silenced: count((alert) => alert.silencedBy.length > 0),
      inhibited: count((alert) => alert.inhibitedBy.length > 0),
    },
    journal: { lastSeq: deps.journal.lastSeq(), oldestSeq: deps.journal.oldestSeq() },
    cluster: clusterView(deps.cluster()),
  };
}

/** GET /status. */
export function statusRoute(deps: StatusDeps): AnyApiRoute {
  return defineRoute({
    method: "GET",
    path: "/status",
    summary: "The daemon: version, uptime, config generation, readiness, sinks, upstream and counts.",
    tag: "status",
    query: z.strictObject({}),
    responses: {
      200: { description: "the daemon's status", schema: STATUS_RESPONSE },
      400: { description: "a query parameter was given (it takes none)" },
    },
    handle: () => ({ status: 200, body: statusView(deps) }),
  });
}
