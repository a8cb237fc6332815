// The answer of GET /api/v1/targets as zod schemas: what the status page and OpenAPI read about each monitored target.
import { z } from "zod";

/** An ISO 8601 time (UTC, milliseconds). */
const ISO_TIME = z.string().describe("ISO 8601 time, UTC");

/** Kinds of monitored target (a TargetSpec's `kind`). */
export const TARGET_KIND = z.enum(["offchain", "onchain", "publishers", "funding", "vault"]);

/** The latest poll of a target, successful or not. */
export const TARGET_LAST_POLL = z.object({
  at: ISO_TIME.describe("when the latest poll ended (the daemon's clock)"),
  ok: z.boolean(),
  durationMs: z.number().nonnegative().describe("how long the latest poll took, its retries included"),
  consecutiveFailures: z
    .number()
    .int()
    .nonnegative()
    .describe("failed polls in a row (0 when the latest succeeded)"),
  error: z
    .object({
      code: z.string().describe("stable error code, e.g. PM_ERR_UPSTREAM_HTTP"),
      message: z.string(),
    })
    .nullable()
    .describe("why the latest poll failed; null when it succeeded"),
});

/** The latest value the domain decoded for a target, by what the target measures. */
export const TARGET_LATEST = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("price"),
    price: z.string().describe("aggregate price as an exact decimal string"),
    comparable: z
      .boolean()
      .describe("false when the price cannot be compared (on-chain decimals unknown, zero price)"),
    at: ISO_TIME.describe("the price's own timestamp (upstream)"),
    numSources: z.number().int().nonnegative(),
  }),
  z.object({
    kind: z.literal("publishers"),
    publishers: z.number().int().nonnegative(),
    feeds: z.number().int().nonnegative().describe("feeds of every publisher together"),
    newestUpdateAt: ISO_TIME.nullable().describe("the most recent update of any publisher"),
  }),
  z.object({
    kind: z.literal("funding"),
    hourlyRate: z.number().describe("latest funding rate, a fraction per hour"),
    at: ISO_TIME.describe("time of the latest funding point"),
  }),
  z.object({
    kind: z.literal("vault"),
    status: z.string().describe("live, paused, retired or another value as the vault API sent it"),
    sharePrice: z.string().describe("as the vault API sent it"),
    tvl: z.string().describe("as the vault API sent it"),
    depositsPaused: z.boolean().nullable(),
  }),
]);

/** One point of a target's recent history (sparklines). */
export const TARGET_HISTORY_POINT = z.object({
  at: ISO_TIME,
  value: z.number().describe("price or share price (nearest double), or hourly funding rate"),
});

/** One monitored target. */
export const TARGET_VIEW = z.object({
  id: z.string().describe("stable target id, e.g. offchain:BTC/USD:spot:median:1min"),
  kind: TARGET_KIND,
  labels: z
    .record(z.string(), z.string())
    .describe(
      "what the target is: pair, market, entry_type, aggregation, interval, expiry, network, publisher_type, source, vault",
    ),
  periodMs: z.number().int().positive().describe("poll period"),
  lastPoll: TARGET_LAST_POLL.nullable().describe("null before the first poll ended"),
  lastSuccessAt: ISO_TIME.nullable().describe(
    "when the latest successful poll was observed; null when none yet",
  ),
  ageMs: z
    .number()
    .nullable()
    .describe(
      "age of the data now: from the price's own timestamp, the latest funding point, the newest publisher update, or (vault) the latest successful poll; null without data",
    ),
  nextPollAt: ISO_TIME.nullable().describe(
    "when the next poll is due: one period after the latest one started (± jitter); null before the first poll and while failing (backoff)",
  ),
  latest: TARGET_LATEST.nullable().describe("null until a poll succeeded"),
  history: z
    .array(TARGET_HISTORY_POINT)
    .max(120)
    .describe(
      "recent values, oldest first, at most 120 (downsampled): the price ring a windowed rule keeps, or the funding points of the latest poll; empty when the daemon keeps none",
    ),
});

/** The answer of GET /api/v1/targets. */
export const TARGETS_RESPONSE = z.object({
  targets: z.array(TARGET_VIEW).describe("every monitored target, sorted by id"),
});

/** One target as the API answers it. */
export type TargetView = z.infer<typeof TARGET_VIEW>;
/** The latest value of a target. */
export type TargetLatest = z.infer<typeof TARGET_LATEST>;
