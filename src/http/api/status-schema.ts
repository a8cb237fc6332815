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

/** The answer of GET /api/v1/status. */
export const STATUS_RESPONSE = z.object({
  version: z.string(),
  startedAt: z.string().describe("when this process started, ISO 8601"),
  uptimeMs: z.number().nonnegative(),
  configGeneration: z
    .number()
    .int()
    .nonnegative()
    .describe("0 for the config the daemon started with, +1 on each successful reload (SIGHUP)"),
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
  cluster: z.null().describe("cluster mode is not part of this build: always null"),
});

/** The status as the API answers it. */
export type StatusView = z.infer<typeof STATUS_RESPONSE>;
