// The one backoff formula: a table per named policy with an injected random, and the full-jitter bounds as a property.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  TAIL_RECONNECT_BACKOFF,
  delayMs,
  pollBackoff,
  sinkRetryBackoff,
  upstreamRetryBackoff,
  type BackoffPolicy,
} from "../src/backoff.js";

interface Row {
  readonly name: string;
  readonly policy: BackoffPolicy;
  readonly attempt: number;
  readonly random: number;
  readonly retryAfterMs?: number;
  readonly want: number;
}

const upstream = upstreamRetryBackoff({ baseDelayMs: 100, maxDelayMs: 1_000 });
const sink = sinkRetryBackoff({ baseDelayMs: 1_000, maxDelayMs: 60_000 });
const poll = pollBackoff(10, 80);

describe("delayMs", () => {
  it.each<Row>([
    { name: "full jitter: nothing at random 0", policy: upstream, attempt: 1, random: 0, want: 0 },
    { name: "full jitter: below the ceiling", policy: upstream, attempt: 1, random: 0.999, want: 99 },
    { name: "full jitter: doubles per attempt", policy: upstream, attempt: 4, random: 0.5, want: 400 },
    { name: "full jitter: capped", policy: upstream, attempt: 10, random: 0.999, want: 999 },
    {
      name: "full jitter: Retry-After replaces it, past the cap",
      policy: upstream,
      attempt: 1,
      random: 0.5,
      retryAfterMs: 3_000,
      want: 3_000,
    },
    { name: "equal jitter: half at random 0", policy: sink, attempt: 3, random: 0, want: 2_000 },
    { name: "equal jitter: three quarters at 0.5", policy: sink, attempt: 1, random: 0.5, want: 750 },
    { name: "equal jitter: whole ceiling at 1", policy: sink, attempt: 4, random: 1, want: 8_000 },
    { name: "equal jitter: capped", policy: sink, attempt: 30, random: 1, want: 60_000 },
    { name: "equal jitter: attempt 0 is the first", policy: sink, attempt: 0, random: 1, want: 1_000 },
    {
      name: "equal jitter: a shorter Retry-After replaces it",
      policy: sink,
      attempt: 5,
      random: 1,
      retryAfterMs: 10,
      want: 10,
    },
    { name: "poll: never sooner than a period", policy: poll, attempt: 1, random: 0, want: 10 },
    { name: "poll: equal jitter of period·2^(n-1)", policy: poll, attempt: 3, random: 0.5, want: 30 },
    { name: "poll: capped at maxBackoffMs", policy: poll, attempt: 5, random: 1, want: 80 },
    {
      name: "poll: a longer Retry-After lengthens it",
      policy: poll,
      attempt: 1,
      random: 0,
      retryAfterMs: 50,
      want: 50,
    },
    {
      name: "poll: a shorter Retry-After changes nothing",
      policy: poll,
      attempt: 3,
      random: 0.5,
      retryAfterMs: 1,
      want: 30,
    },
    {
      name: "poll: Retry-After capped at maxBackoffMs",
      policy: poll,
      attempt: 1,
      random: 0,
      retryAfterMs: 500,
      want: 80,
    },
    {
      name: "poll: maxBackoffMs wins over a longer period",
      policy: pollBackoff(100, 50),
      attempt: 1,
      random: 0.5,
      want: 50,
    },
    {
      name: "tail: a quarter second at first",
      policy: TAIL_RECONNECT_BACKOFF,
      attempt: 1,
      random: 0.5,
      want: 125,
    },
    { name: "tail: 30 s at most", policy: TAIL_RECONNECT_BACKOFF, attempt: 20, random: 0.5, want: 15_000 },
  ])("$name", ({ policy, attempt, random, retryAfterMs, want }) => {
    expect(delayMs(policy, attempt, () => random, retryAfterMs)).toBe(want);
  });

  it("draws no random number when the server's Retry-After is the wait", () => {
    const random = (): number => {
      throw new Error("random drawn");
    };
    expect(delayMs(sink, 3, random, 1_500)).toBe(1_500);
  });

  it("full jitter stays within [0, min(maxDelayMs, base·2^(n-1)))", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        (n, r) => {
          const waitMs = delayMs(upstream, n, () => r);
          expect(waitMs).toBeGreaterThanOrEqual(0);
          expect(waitMs).toBeLessThan(Math.min(1_000, 100 * 2 ** (n - 1)));
        },
      ),
    );
  });
});
