// Line parsing: the hand-checked fast paths for response and poll lines give exactly what the schema gives.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkRecordJson, flatLineCheck, parseRecordLine } from "../../src/record/format.js";

const response = {
  type: "response",
  atMs: 1_000,
  requestAtMs: 990,
  target: "offchain:ETH/USD:spot:median:1s",
  purpose: "poll",
  endpoint: "pair_price",
  url: "http://127.0.0.1:1/node/v1/data/ETH/USD",
  status: 200,
  error: null,
  body: "{}",
};
const poll = { type: "poll", atMs: 1_000, target: "offchain:ETH/USD:spot:median:1s", ok: true };

describe("parseRecordLine", () => {
  it.each([
    ["a response", response],
    [
      "a response with no target, purpose, status or body",
      {
        ...response,
        target: null,
        purpose: null,
        status: null,
        body: null,
        error: "PM_ERR_UPSTREAM_NETWORK",
      },
    ],
    ["a warm-up response", { ...response, purpose: "warmup" }],
    ["a poll", poll],
    [
      "a failed poll with every optional field",
      { ...poll, ok: false, code: "PM_ERR_UPSTREAM_HTTP", message: "HTTP 503", retryable: true, held: false },
    ],
  ])("takes %s as it is", (_, line) => {
    expect(parseRecordLine(JSON.stringify(line))).toEqual({ ok: true, line });
  });

  it("drops keys the format does not know, as the schema does", () => {
    const parsed = parseRecordLine(JSON.stringify({ ...response, extra: 1 }));
    expect(parsed).toEqual({ ok: true, line: response });
    expect(parseRecordLine(JSON.stringify({ ...poll, extra: "x" }))).toEqual({ ok: true, line: poll });
  });

  it.each([
    ["a fractional status", { ...response, status: 200.5 }, /^status: /],
    ["an empty target", { ...response, target: "" }, /^target: /],
    ["an unknown purpose", { ...response, purpose: "probe" }, /^purpose: /],
    ["a body that is not a string", { ...response, body: { price: 1 } }, /^body: /],
    ["a missing url", { ...response, url: undefined }, /^url: /],
    ["a poll without ok", { ...poll, ok: undefined }, /^ok: /],
    ["a poll whose retryable is a string", { ...poll, retryable: "yes" }, /^retryable: /],
    ["a poll whose atMs is a string", { ...poll, atMs: "1000" }, /^atMs: /],
    ["an unknown type", { ...poll, type: "probe" }, /^type: /],
  ])("rejects %s, naming the field", (_, line, reason) => {
    const parsed = parseRecordLine(JSON.stringify(line));
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.reason).toMatch(reason);
  });

  it("says why a line is not JSON", () => {
    const parsed = parseRecordLine('{"type":"poll",');
    expect(!parsed.ok && parsed.reason).toMatch(/^not JSON \(/);
  });
});

describe("flatLineCheck", () => {
  // what a flat JSON line may hold as a value; strings the format knows are likely, so lines often pass
  const value = fc.oneof(
    fc.constantFrom("response", "poll", "warmup", "pair_price", "t", "", null, true, false, 200, 1_000),
    fc.string(),
    fc.double(),
    fc.integer(),
  );
  const keysOf = (line: object): string[] => Object.keys(line);

  /** The values of `keys` in order, or from `line` where fc leaves one as it is. */
  const shaped = (keys: readonly string[], base: Record<string, unknown>) =>
    fc
      .tuple(...keys.map((key) => fc.oneof(fc.constant(base[key]), value)))
      .map((values) => ({ keys, values }));

  it("gives the line (same keys in the same order) or the reason checkRecordJson gives the object", () => {
    const shapes = fc.oneof(
      shaped(keysOf(response), response),
      shaped(keysOf(poll), poll),
      // other shapes: reordered, missing or extra keys
      shaped(["atMs", "type", "target", "ok"], poll),
      shaped([...keysOf(poll), "code"], { ...poll, code: "PM_ERR_X" }),
      shaped(keysOf(response).slice(1), response),
    );
    fc.assert(
      fc.property(shapes, fc.array(value, { maxLength: 3 }), ({ keys, values }, before) => {
        const json: Record<string, unknown> = {};
        keys.forEach((key, k) => (json[key] = values[k]));
        const expected = checkRecordJson(json);
        const got = flatLineCheck(keys)([...before, ...values], before.length);
        expect(got).toEqual(expected);
        if (got.ok && expected.ok) expect(JSON.stringify(got.line)).toBe(JSON.stringify(expected.line));
      }),
      { numRuns: 2_000 },
    );
  });
});
