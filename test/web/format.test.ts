// How the page writes ages, prices, rule values and timeline lines.
import { describe, expect, it } from "vitest";
import {
  describeEvent,
  eventTime,
  formatAge,
  formatClock,
  formatLabels,
  formatPrice,
  formatRuleValue,
  formatValueVsThreshold,
} from "../../web/src/format.js";
import { alert } from "./frames.js";

describe("format", () => {
  it.each<[number, string]>([
    [-500, "0s"],
    [999, "0s"],
    [12_400, "12s"],
    [185_000, "3m 05s"],
    [7_440_000, "2h 04m"],
    [273_600_000, "3d 4h"],
  ])("age %d ms → %s", (ms, text) => {
    expect(formatAge(ms)).toBe(text);
  });

  it.each<[string, string]>([
    ["86979.84946924", "86979.85"],
    ["2034.4", "2034.40"],
    ["127.46291", "127.4629"],
    ["0.17344821", "0.1734"],
    ["0.000123456", "0.0001235"],
    ["0", "0"],
    ["not a number", "not a number"],
  ])("price %s → %s", (price, text) => {
    expect(formatPrice(price)).toBe(text);
  });

  it.each<[string, number | null, string]>([
    ["price_change", 0.0502, "5.02%"],
    ["price_change", -0.125, "-12.5%"],
    ["stale_price", 65_000, "1m 05s"],
    ["low_sources", 2, "2"],
    ["price_level", 90000, "90000.00"],
    ["funding_rate", 0.0012, "0.12%/h"],
    ["variation", null, "–"],
  ])("%s value %j → %s", (rule, value, text) => {
    expect(formatRuleValue(rule, value)).toBe(text);
  });

  it("writes value vs threshold, or nothing when the alert has neither", () => {
    expect(formatValueVsThreshold("price_change", 0.06, 0.02)).toBe("6.00% (threshold 2.00%)");
    expect(formatValueVsThreshold("vault_status", null, null)).toBe("");
  });

  it("sorts labels by name", () => {
    expect(formatLabels({ window: "10s", pair: "BTC/USD" })).toBe("pair=BTC/USD window=10s");
  });

  it("describes timeline events with a badge and their own time", () => {
    const firing = {
      type: "alert" as const,
      seq: 1,
      alert: alert({ context: { observedAt: "2026-11-22T10:00:03.000Z" } }),
    };
    expect(describeEvent(firing)).toEqual({
      badge: "firing",
      text: `warning price_change: ${alert().summary}`,
    });
    expect(eventTime(firing)).toBe("2026-11-22T10:00:03.000Z");
    const reminder = { ...firing, alert: alert({ reason: "repeat" }) };
    expect(describeEvent(reminder).badge).toBe("reminder");
    expect(eventTime(reminder)).toBe(alert().startsAt);
    const resolved = { ...firing, alert: alert({ status: "resolved", endsAt: "2026-11-22T10:09:00.000Z" }) };
    expect(describeEvent(resolved).badge).toBe("resolved");
    expect(eventTime(resolved)).toBe("2026-11-22T10:09:00.000Z");
    const created = {
      type: "lifecycle" as const,
      event: "silence_created",
      at: "2026-11-22T10:01:00.000Z",
      detail: { id: "s1" },
    };
    expect(describeEvent(created)).toEqual({ badge: "daemon", text: "silence created: id=s1" });
    expect(eventTime(created)).toBe("2026-11-22T10:01:00.000Z");
  });

  it("writes a silence's lifecycle event as a sentence: what, by whom, until when, why, and how if not by hand", () => {
    const endsAt = "2026-11-22T12:00:00.000Z";
    const detail = {
      id: "s1",
      cause: "created",
      matchers: '{pair="BTC/USD"}',
      startsAt: "2026-11-22T10:00:00.000Z",
      endsAt,
      createdBy: "ana",
      comment: "exchange maintenance",
    };
    const event = (name: string, extra = {}) => ({
      type: "lifecycle" as const,
      event: name,
      at: "2026-11-22T10:00:00.000Z",
      detail: { ...detail, ...extra },
    });
    expect(describeEvent(event("silence_created"))).toEqual({
      badge: "silence",
      text: `silence created: {pair="BTC/USD"} by ana until ${formatClock(endsAt)} (exchange maintenance)`,
    });
    expect(describeEvent(event("silence_expired", { cause: "ended" })).text).toMatch(
      /\(exchange maintenance\), ended$/,
    );
  });
});
