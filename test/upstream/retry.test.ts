// Pure retry policy and error-body parsing: Retry-After forms, budget limits (the backoff itself: test/backoff.test.ts).
import { describe, expect, it } from "vitest";
import { PmError } from "../../src/domain/errors.js";
import { parseRetryAfterMs } from "../../src/retry-after.js";
import { parseUpstreamErrorBody } from "../../src/upstream/error-body.js";
import { isTransientHttpFailure, retryDelayMs } from "../../src/upstream/retry.js";

const policy = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1_000, maxElapsedMs: 5_000 };
const retryable = (retryAfterMs?: number) =>
  new PmError("PM_ERR_UPSTREAM_HTTP", "x", {
    retryable: true,
    details: retryAfterMs === undefined ? {} : { retryAfterMs },
  });

describe("retry policy", () => {
  it.each([
    {
      name: "not retryable",
      error: new PmError("PM_ERR_UPSTREAM_HTTP", "x"),
      attempt: 1,
      elapsedMs: 0,
      want: null,
    },
    { name: "attempts exhausted", error: retryable(), attempt: 5, elapsedMs: 0, want: null },
    { name: "budget spent", error: retryable(), attempt: 1, elapsedMs: 5_000, want: null },
    {
      name: "backoff clipped to remaining budget",
      error: retryable(),
      attempt: 4,
      elapsedMs: 4_900,
      want: 100,
    },
    {
      name: "Retry-After honoured above maxDelayMs",
      error: retryable(3_000),
      attempt: 1,
      elapsedMs: 0,
      want: 3_000,
    },
    {
      name: "Retry-After past the budget gives up",
      error: retryable(3_000),
      attempt: 1,
      elapsedMs: 2_500,
      want: null,
    },
  ])("$name", ({ error, attempt, elapsedMs, want }) => {
    expect(retryDelayMs(policy, error, attempt, elapsedMs, () => 0.999)).toBe(want);
  });
});

describe("Retry-After and error bodies", () => {
  it.each([
    { header: "2", want: 2_000 },
    { header: " 0 ", want: 0 },
    { header: "Wed, 21 Oct 2015 07:28:05 GMT", want: 5_000 },
    { header: "Wed, 21 Oct 2015 07:27:00 GMT", want: 0 },
    { header: "soon", want: null },
    { header: undefined, want: null },
  ])("Retry-After $header → $want", ({ header, want }) => {
    expect(parseRetryAfterMs(header, Date.parse("Wed, 21 Oct 2015 07:28:00 GMT"))).toBe(want);
  });

  it.each([
    { text: "", want: { kind: "empty" } },
    {
      text: "Failed to deserialize query string: unknown variant `mean`",
      want: { kind: "text", text: "Failed to deserialize query string: unknown variant `mean`" },
    },
    {
      text: '{"InvalidSignature":{"ConversionError":"FailedSerialization"}}',
      want: { kind: "signature", conversionError: "FailedSerialization" },
    },
    { text: '{"status":"error","msg":"rate limited"}', want: { kind: "vault", message: "rate limited" } },
    { text: '{"unexpected":true}', want: { kind: "text", text: '{"unexpected":true}' } },
    { text: "<html>502</html>", want: { kind: "text", text: "<html>502</html>" } },
  ])("error body $text", ({ text, want }) => {
    expect(parseUpstreamErrorBody(text)).toEqual(want);
  });
});

describe("transient or permanent HTTP failures", () => {
  const entry = (message: string) => ({
    kind: "entry" as const,
    resource: "EntryModel",
    message,
    happenedAt: "",
  });
  it.each([
    { status: 429, body: { kind: "empty" as const }, transient: true },
    { status: 502, body: { kind: "text" as const, text: "bad gateway" }, transient: true },
    { status: 503, body: entry("Service unavailable"), transient: true },
    { status: 504, body: { kind: "empty" as const }, transient: true },
    { status: 500, body: { kind: "empty" as const }, transient: true },
    { status: 500, body: { kind: "text" as const, text: "<html>oops</html>" }, transient: true },
    { status: 500, body: entry("Database error: connection pool timed out"), transient: true },
    { status: 500, body: entry("Database error: Connection refused"), transient: true },
    { status: 500, body: entry('Database error: relation "twap_1w" does not exist'), transient: false },
    { status: 500, body: entry("Internal server error"), transient: false },
    {
      status: 500,
      body: { kind: "signature" as const, conversionError: "FailedSerialization" },
      transient: false,
    },
    { status: 501, body: { kind: "empty" as const }, transient: false },
    { status: 400, body: entry("Unsupported interval 5min for aggregation median"), transient: false },
    { status: 404, body: entry("Entry not found: BTC/USD"), transient: false },
  ])("$status $body.kind $body.message → transient $transient", ({ status, body, transient }) => {
    expect(isTransientHttpFailure(status, body)).toBe(transient);
  });
});
