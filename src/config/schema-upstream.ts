// Schema of the `upstream` section: where prices come from (the embedded simulator or the Pragma API).
import { intKey, key, type SchemaSection } from "./schema-node.js";

/** `upstream.*` keys. */
export const upstreamSchema = {
  url: key({
    doc: 'Pragma API base URL (absolute http(s)), or "simulator" to start the embedded simulator.',
    format: "pm-upstream-url",
    default: "simulator",
    env: "PM_UPSTREAM_URL",
  }),
  vaultUrl: key({
    doc: 'Base URL of the vault API ("" = same as url; with the simulator, its vault base path).',
    format: "pm-optional-url",
    default: "",
    env: "PM_UPSTREAM_VAULT_URL",
  }),
  apiKey: key({
    doc: "API key sent as x-api-key (secret).",
    format: "*",
    default: "",
    env: "PM_API_KEY",
    sensitive: true,
  }),
  timeoutMs: intKey("Per-request timeout (ms).", "PM_UPSTREAM_TIMEOUT_MS", 5_000, 100, 120_000),
  connections: intKey("Keep-alive connections to the API.", "PM_UPSTREAM_CONNECTIONS", 16, 1, 1_024),
  transport: key<"poll" | "stream">({
    doc: 'How off-chain prices arrive by default: "poll" (GET /data per pair every periodMs) or "stream" (one Server-Sent Events connection per interval carrying every streamed pair; spot median entries only, the others poll). Overridden per monitor by monitors.offchain[].transport.',
    format: ["poll", "stream"],
    default: "poll",
    env: "PM_UPSTREAM_TRANSPORT",
  }),
  stream: {
    staleIntervals: intKey(
      "A streamed pair whose price has not come for this many stream intervals (at least 2 s) is stale: its polls take over until the stream delivers it again.",
      "PM_UPSTREAM_STREAM_STALE_INTERVALS",
      3,
      2,
      100,
    ),
    recoverEvents: intKey(
      "Events in a row (each within the stale window of the previous one) a pair must receive over the stream before its polls stop again.",
      "PM_UPSTREAM_STREAM_RECOVER_EVENTS",
      3,
      1,
      100,
    ),
    historicalPrices: intKey(
      "Prices per pair the stream sends first (`historical_prices`); they fill price history like warm-up.",
      "PM_UPSTREAM_STREAM_HISTORICAL_PRICES",
      50,
      0,
      1_000,
    ),
    componentsPeriodMs: intKey(
      "Poll period (ms) of a streamed target whose rules read components (component_deviation): the stream carries none. Their timers use one-second coalescing slots (at most a tenth of the period; none while `monitors.coalesceMs` is 0), so a burst of them shares a few wake-ups.",
      "PM_UPSTREAM_STREAM_COMPONENTS_PERIOD_MS",
      60_000,
      1_000,
      86_400_000,
    ),
    maxReconnectDelayMs: intKey(
      "Longest wait (ms) before reopening a failed stream connection (the wait doubles from 500 ms, jittered).",
      "PM_UPSTREAM_STREAM_MAX_RECONNECT_DELAY_MS",
      30_000,
      500,
      600_000,
    ),
    maxPairsPerConnection: intKey(
      "Pairs per stream connection (a longer list opens more connections, so no URL grows past what servers accept).",
      "PM_UPSTREAM_STREAM_MAX_PAIRS_PER_CONNECTION",
      500,
      1,
      2_000,
    ),
  },
  retry: {
    maxAttempts: intKey(
      "Attempts per poll including the first (1 = no retry).",
      "PM_UPSTREAM_RETRY_MAX_ATTEMPTS",
      3,
      1,
      20,
    ),
    baseDelayMs: intKey(
      "First retry delay (ms), doubled per attempt, jittered.",
      "PM_UPSTREAM_RETRY_BASE_DELAY_MS",
      100,
      0,
      60_000,
    ),
    maxDelayMs: intKey(
      "Longest delay between retries (ms).",
      "PM_UPSTREAM_RETRY_MAX_DELAY_MS",
      2_000,
      0,
      300_000,
    ),
    maxElapsedMs: intKey(
      "Stop retrying once this much time has passed since the first attempt (ms).",
      "PM_UPSTREAM_RETRY_MAX_ELAPSED_MS",
      10_000,
      0,
      600_000,
    ),
  },
  simulator: {
    seed: intKey(
      "Seed of the simulated market (same seed, same prices).",
      "PM_SIMULATOR_SEED",
      42,
      0,
      2 ** 31 - 1,
    ),
    scenario: key({
      doc: 'Fault scenario: "demo" (built-in), a path to a scenario JSON file, or "" for none.',
      format: "*",
      default: "demo",
      env: "PM_SIMULATOR_SCENARIO",
    }),
    speed: key({
      doc: "Simulated seconds per real second.",
      format: "pm-number",
      default: 1,
      env: "PM_SIMULATOR_SPEED",
      min: 0.01,
      max: 1_000,
    }),
    apiKeys: key<readonly string[]>({
      doc: "API keys the simulator requires (comma-separated in env; empty = no auth; secret).",
      format: "pm-string-list",
      default: [],
      env: "PM_SIMULATOR_API_KEYS",
      sensitive: true,
    }),
  },
} as const satisfies SchemaSection;
