// The `cluster` section of the schema: NATS JetStream membership and target ownership (docs/cluster.md).
import { intKey, key } from "./schema-node.js";

/** Cluster mode: off while `nats.servers` is empty (the single-process default). */
export const clusterSchema = {
  nats: {
    servers: key<readonly string[]>({
      doc: 'NATS servers of the cluster, e.g. ["nats://10.0.0.1:4222","nats://10.0.0.2:4222"]; [] = cluster mode off (one daemon, file state). Turning it on also needs cluster.experimental (see docs/cluster.md for what is not shared yet).',
      format: "pm-string-list",
      default: [],
      env: "PM_CLUSTER_NATS_SERVERS",
    }),
    user: key({
      doc: 'NATS user name ("" = none); set it from the environment.',
      format: "*",
      default: "",
      env: "PM_CLUSTER_NATS_USER",
      sensitive: true,
    }),
    password: key({
      doc: 'NATS password ("" = none; secret); set it from the environment.',
      format: "*",
      default: "",
      env: "PM_CLUSTER_NATS_PASSWORD",
      sensitive: true,
    }),
    token: key({
      doc: 'NATS authentication token ("" = none; secret); set it from the environment.',
      format: "*",
      default: "",
      env: "PM_CLUSTER_NATS_TOKEN",
      sensitive: true,
    }),
    replicas: intKey(
      "Replicas of the cluster's key-value bucket and event stream (3 on a 3-node NATS cluster; at most the number of NATS nodes).",
      "PM_CLUSTER_NATS_REPLICAS",
      1,
      1,
      5,
    ),
  },
  memberId: key({
    doc: 'This member\'s name in the cluster (letters, digits, "-", "_"); "" = <hostname>-<8 random hex digits>, new on every start. Two live members must not share one.',
    format: "*",
    default: "",
    env: "PM_CLUSTER_MEMBER_ID",
  }),
  leaseMs: intKey(
    "A member's lease (ms): renewed every third of it; a member that has not renewed for this long loses its targets to the others, and stops polling them itself.",
    "PM_CLUSTER_LEASE_MS",
    10_000,
    1_000,
    600_000,
  ),
  historyCheckpointMs: intKey(
    "How often (ms) a member writes the recent price points of the targets it owns to their ownership keys' records in NATS (each key at its own phase of the interval, only when its points changed), so the member that takes a key over after a kill -9 reaches back at most this far; 0 = only on a graceful handover.",
    "PM_CLUSTER_HISTORY_CHECKPOINT_MS",
    10_000,
    0,
    600_000,
  ),
  experimental: key({
    doc: "Must be true to turn cluster mode on while it is incomplete: targets, their alert state, the event log, the notifications (grouping too) and silences are shared, but maintenance windows and the daemon's own alerts are per member, a transition still queued for the log when its member dies is decided again (later) by the new owner, and a price move across a member's kill -9 is missed by a window shorter than the gap (docs/cluster.md).",
    format: "pm-boolean",
    default: false,
    env: "PM_CLUSTER_EXPERIMENTAL",
  }),
} as const;
