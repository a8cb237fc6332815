// The answer of GET /api/v1/status as a zod schema: the daemon's version, uptime, readiness, sinks, upstream and counts.
import { z } from "zod";

/** One chat-ops sink and its health (what the sinks report; heartbeat sinks included). */
export const STATUS_SINK = z.object({
  name: z.string(),
  kind: z.string().describe("slack, discord, telegram, pagerduty, alertmanager, webhook or heartbeat"),
  running: z.boolean().describe("false when its outbox could not be opened: nothing is delivered"),
  failing: z.boolean().describe("its sink_error alert is firing"),
  pending: z.number().int().nonnegative().describe("messages waiting in its outbox"),
  consecutiveFailures: z.number().int().nonnegative(),
  lastError: z.string().nullable().describe("latest failure since the last success, e.g. http_error 500"),
  groups: z
    .number()
    .int()
    .nonnegative()
    .describe(
      "notification groups it holds (firing, or resolves not yet notified); 0 for a sink that does not group",
    ),
});

/** One live cluster member as the latest membership scan read its lease record. */
export const STATUS_CLUSTER_MEMBER = z.object({
  memberId: z.string(),
  self: z.boolean().describe("true for the member answering"),
  incarnation: z.string().describe("random per process: a restarted member is a new incarnation"),
  leaseExpiresAt: z.string().describe("when its lease runs out unless renewed, ISO 8601 (its own clock)"),
  leaseRevision: z.number().int().nonnegative().describe("the KV revision of its lease record (its fence)"),
  targets: z.number().int().nonnegative().describe("targets under the keys it owns"),
  keys: z
    .array(z.string())
    .describe(
      "ownership keys it owns (pair:<pair>, or a target id); another member's as of its last renewal",
    ),
  standby: z
    .boolean()
    .describe(
      "true while it stands by (its membership view not current): it owns nothing and the others leave it out of the rendezvous",
    ),
});

/** Cluster mode as the answering member sees it. */
export const STATUS_CLUSTER = z.object({
  memberId: z.string(),
  leaseRevision: z.number().int().nonnegative().nullable().describe("null while it holds no lease"),
  leaseExpiresAt: z.string().nullable().describe("null while it holds no lease"),
  error: z.string().nullable().describe("why it cannot reach NATS (the cluster_error alert fires meanwhile)"),
  ownedKeys: z.number().int().nonnegative(),
  pendingKeys: z.number().int().nonnegative().describe("keys it will take after the handover wait"),
  standby: z
    .boolean()
    .describe(
      "true while this member stands by: starting, or its membership view not current for a whole lease; it owns nothing (not ready)",
    ),
  members: z.array(STATUS_CLUSTER_MEMBER).describe("live members, by member id"),
  config: z
    .object({
      generation: z.number().int().nonnegative().nullable().describe("the cluster's (null until read)"),
      hash: z.string().describe("hash of this member's monitors, rules, alerts, maintenance and sinks"),
      clusterHash: z.string().nullable().describe("hash of the config the cluster's generation names"),
      current: z.boolean().nullable().describe("false: this member runs another config than the cluster's"),
      loadedBy: z.string().nullable().describe("the member that loaded the cluster's config last"),
    })
    .describe("the shared config generation: the config any member loaded last (start or reload)"),
});

/** The answer of GET /api/v1/status. */
export const STATUS_RESPONSE = z.object({
  version: z.string(),
  startedAt: z.string().describe("when this process started, ISO 8601"),
  uptimeMs: z.number().nonnegative(),
  configGeneration: z
    .number()
    .int()
    .nonnegative()
    .describe(
      "0 for the config the daemon started with, +1 on each successful reload (SIGHUP); in cluster mode the cluster's, shared through NATS (cluster.config)",
    ),
  readiness: z
    .object({
      ready: z.boolean(),
      reasons: z.array(z.string()).describe("why not ready, as /readyz says; empty when ready"),
    })
    .describe("what /readyz answers"),
  upstream: z.object({
    url: z.string().describe("base URL polled, credentials redacted"),
    simulator: z.boolean().describe("true when it is the embedded simulator"),
  }),
  sinks: z.array(STATUS_SINK),
  counts: z.object({
    targets: z.number().int().nonnegative(),
    firing: z.number().int().nonnegative(),
    pending: z.number().int().nonnegative(),
    silenced: z
      .number()
      .int()
      .nonnegative()
      .describe("firing and pending alerts muted by at least one silence"),
    inhibited: z
      .number()
      .int()
      .nonnegative()
      .describe("firing and pending alerts held by a firing upstream_error on their data"),
  }),
  journal: z.object({
    lastSeq: z.number().int().nonnegative().describe("seq of the latest journaled event"),
    oldestSeq: z.number().int().nonnegative().describe("oldest seq still held for /alerts/history"),
  }),
  cluster: STATUS_CLUSTER.nullable().describe("null unless cluster mode is on"),
});

/** The status as the API answers it. */
export type StatusView = z.infer<typeof STATUS_RESPONSE>;
