// The silence dialog's logic: matchers from an alert, duration parsing, the checks, the POST body, what may expire.
import { describe, expect, it } from "vitest";
import {
  canExpire,
  draftFromAlert,
  matchableNames,
  matcherOf,
  matcherText,
  operatorOf,
  parseDuration,
  silenceFromDraft,
  sortSilences,
  type SilenceDraft,
} from "../../web/src/silence-form.js";
import { alert, silence } from "./frames.js";

const NOW = Date.parse("2026-11-22T10:00:00.000Z");

describe("parseDuration", () => {
  it.each<[string, number | null]>([
    ["2h", 7_200_000],
    ["30m", 1_800_000],
    ["1h30m", 5_400_000],
    [" 1D ", 86_400_000],
    ["1w", 604_800_000],
    ["90s", 90_000],
    ["0m", null],
    ["", null],
    ["2 hours", null],
    ["-1h", null],
    ["1.5h", null],
  ])("%j → %j", (text, expected) => {
    expect(parseDuration(text)).toBe(expected);
  });
});

describe("matchers", () => {
  it.each([
    ["=", { isRegex: false, isEqual: true }],
    ["!=", { isRegex: false, isEqual: false }],
    ["=~", { isRegex: true, isEqual: true }],
    ["!~", { isRegex: true, isEqual: false }],
  ] as const)("operator %s is Alertmanager's %j both ways", (operator, flags) => {
    const matcher = matcherOf({ name: " pair ", operator, value: "BTC/USD" });
    expect(matcher).toEqual({ name: "pair", value: "BTC/USD", ...flags });
    expect(operatorOf(matcher)).toBe(operator);
    expect(matcherText(matcher)).toBe(`pair${operator}"BTC/USD"`);
  });

  it("prefills the rule and every label of the alert as equality matchers, 2 h, with the remembered author", () => {
    const draft = draftFromAlert(
      alert({ labels: { pair: "BTC/USD", window: "10s", market: "offchain" } }),
      "ops",
    );
    expect(draft).toEqual({
      matchers: [
        { name: "rule", operator: "=", value: "price_change" },
        { name: "market", operator: "=", value: "offchain" },
        { name: "pair", operator: "=", value: "BTC/USD" },
        { name: "window", operator: "=", value: "10s" },
      ],
      duration: "2h",
      createdBy: "ops",
      comment: "",
    });
  });

  it("offers the alert's labels plus rule, severity and alertname as names", () => {
    expect(matchableNames(alert({ labels: { pair: "BTC/USD" } }))).toEqual([
      "alertname",
      "pair",
      "rule",
      "severity",
    ]);
  });
});

describe("silenceFromDraft", () => {
  const good: SilenceDraft = {
    matchers: [{ name: "pair", operator: "=", value: "BTC/USD" }],
    duration: "1h",
    createdBy: " ops ",
    comment: " deploy ",
  };

  it("builds the POST body: from now for the duration, trimmed author and comment", () => {
    expect(silenceFromDraft(good, NOW)).toEqual({
      ok: true,
      silence: {
        matchers: [{ name: "pair", value: "BTC/USD", isRegex: false, isEqual: true }],
        startsAt: "2026-11-22T10:00:00.000Z",
        endsAt: "2026-11-22T11:00:00.000Z",
        createdBy: "ops",
        comment: "deploy",
      },
    });
  });

  it.each<[string, Partial<SilenceDraft>, string[]]>([
    ["no matcher", { matchers: [] }, ["matchers"]],
    ["a bad label name", { matchers: [{ name: "1pair", operator: "=", value: "x" }] }, ["matchers.0.name"]],
    ["a bad regex", { matchers: [{ name: "pair", operator: "=~", value: "BTC/(" }] }, ["matchers.0.value"]],
    [
      "only matchers that match an empty label (it would silence everything)",
      {
        matchers: [
          { name: "pair", operator: "=~", value: ".*" },
          { name: "rule", operator: "!=", value: "x" },
        ],
      },
      ["matchers"],
    ],
    ["no duration", { duration: "soon" }, ["duration"]],
    ["more than a year", { duration: "400d" }, ["duration"]],
    ["no author, no comment", { createdBy: " ", comment: "" }, ["createdBy", "comment"]],
  ])("refuses %s", (_name, change, fields) => {
    const result = silenceFromDraft({ ...good, ...change }, NOW);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.map((problem) => problem.field)).toEqual(fields);
  });

  it("accepts a regex matcher that does not match the empty label", () => {
    const result = silenceFromDraft(
      { ...good, matchers: [{ name: "pair", operator: "=~", value: "BTC/.*" }] },
      NOW,
    );
    expect(result.ok).toBe(true);
  });
});

describe("the silences list", () => {
  it("never offers to expire a maintenance window or an expired silence", () => {
    expect(canExpire(silence())).toBe(true);
    expect(canExpire(silence({ status: { state: "pending" } }))).toBe(true);
    expect(canExpire(silence({ id: "maintenance:nightly" }))).toBe(false);
    expect(canExpire(silence({ status: { state: "expired" } }))).toBe(false);
  });

  it("lists active, then pending, then expired, the latest end first within each", () => {
    const sorted = sortSilences([
      silence({ id: "old", status: { state: "expired" } }),
      silence({ id: "p", status: { state: "pending" } }),
      silence({ id: "a1", endsAt: "2026-11-22T11:00:00.000Z" }),
      silence({ id: "a2", endsAt: "2026-11-22T13:00:00.000Z" }),
    ]);
    expect(sorted.map((s) => s.id)).toEqual(["a2", "a1", "p", "old"]);
  });
});
