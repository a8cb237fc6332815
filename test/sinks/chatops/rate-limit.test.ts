// Token bucket arithmetic on an explicit clock.
import { describe, expect, it } from "vitest";
import { createTokenBucket } from "../../../src/token-bucket.js";
import { retryAfterFrom } from "../../../src/sinks/chatops/delivery.js";

describe("createTokenBucket", () => {
  it("allows a burst, then refills at ratePerMinute", () => {
    const bucket = createTokenBucket({ ratePerMinute: 60, burst: 3, nowMs: 0 });
    expect([1, 2, 3, 4].map(() => bucket.tryTake(0))).toEqual([true, true, true, false]);
    expect(bucket.msUntilToken(0)).toBe(1000);
    expect(bucket.msUntilToken(400)).toBe(600);
    expect(bucket.tryTake(1000)).toBe(true);
    expect(bucket.available(60_000)).toBe(3);
  });

  it("treats a non-positive rate as unlimited", () => {
    const bucket = createTokenBucket({ ratePerMinute: 0, burst: 1, nowMs: 0 });
    for (let i = 0; i < 100; i++) expect(bucket.tryTake(0)).toBe(true);
    expect(bucket.msUntilToken(0)).toBe(0);
  });
});

describe("retry policy helpers", () => {
  it.each([
    ["120", "", 120_000],
    ["1.5", "", 1_500],
    ["Sun, 22 Nov 2026 10:00:30 GMT", "", 30_000],
    [undefined, '{"retry_after": 2.5}', 2_500],
    [undefined, '{"ok":false,"parameters":{"retry_after":7}}', 7_000],
    ["999999", "", 3_600_000],
    [undefined, "not json", undefined],
  ] as const)("Retry-After %s / body %s → %s ms", (header, body, expected) => {
    expect(retryAfterFrom(header, body, Date.parse("2026-11-22T10:00:00Z"))).toBe(expected);
  });
});
