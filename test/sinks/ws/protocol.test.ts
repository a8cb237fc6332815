// Unit tests of client-message parsing, subscription filters and the rate limiter (pure, table-driven).
import { describe, expect, it } from "vitest";
import type { AlertPayload, BusEvent } from "../../../src/domain/events.js";
import {
  applySubscribe,
  applyUnsubscribe,
  EMPTY_FILTER,
  matchesEvent,
  viewFilter,
} from "../../../src/sinks/ws/filter.js";
import { parseClientMessage } from "../../../src/sinks/ws/protocol.js";
import { createRateLimiter } from "../../../src/sinks/ws/rate-limit.js";
import { alert, PAIRS, RULES, tick } from "./harness.js";

const known = { pairs: new Set(PAIRS), rules: new Set(RULES) };

describe("filter interning", () => {
  const message = (extra: object) => ({
    op: "subscribe" as const,
    id: null,
    channels: ["alerts" as const],
    ...extra,
  });

  it("gives clients with the same filter content one shared object, whatever the order of names", () => {
    const a = applySubscribe(EMPTY_FILTER, message({ pairs: ["BTC/USD", "ETH/USD"] }));
    const b = applySubscribe(EMPTY_FILTER, message({ pairs: ["ETH/USD", "BTC/USD"] }));
    expect(b).toBe(a);
    expect(applySubscribe(EMPTY_FILTER, message({ pairs: ["BTC/USD"] }))).not.toBe(a);
    expect(applySubscribe(EMPTY_FILTER, message({ minSeverity: "critical" }))).not.toBe(
      applySubscribe(EMPTY_FILTER, message({})),
    );
    const narrowed = applyUnsubscribe(a, { op: "unsubscribe", id: null, channels: [], pairs: ["ETH/USD"] });
    expect(narrowed.ok && narrowed.filter).toBe(
      applySubscribe(EMPTY_FILTER, message({ pairs: ["BTC/USD"] })),
    );
  });
});

describe("parseClientMessage", () => {
  it.each([
    ['{"op":"ping","id":"4"}', { op: "ping", id: "4" }],
    ['{"op":"snapshot"}', { op: "snapshot", id: null }],
    ['{"op":"subscribe","id":1}', { op: "subscribe", id: 1, channels: ["alerts"] }],
    [
      '{"op":"subscribe","id":"1","channels":["alerts","prices","alerts"],"pairs":["btc/usd"],"rules":["price_change"],"minSeverity":"warning","since":1000}',
      {
        op: "subscribe",
        id: "1",
        channels: ["alerts", "prices"],
        pairs: ["BTC/USD"],
        rules: ["price_change"],
        minSeverity: "warning",
        since: 1000,
      },
    ],
    [
      '{"op":"unsubscribe","id":"2","channels":["prices"]}',
      { op: "unsubscribe", id: "2", channels: ["prices"] },
    ],
  ])("accepts %s", (text, message) => {
    expect(parseClientMessage(text, known)).toEqual({ ok: true, message });
  });

  it.each([
    ["null", "bad_request"],
    ['"ping"', "bad_request"],
    ['{"op":1}', "bad_request"],
    ['{"op":"PING"}', "unknown_op"],
    ['{"op":"__proto__"}', "unknown_op"],
    ['{"op":"toString"}', "unknown_op"],
    ['{"op":"ping","id":true}', "bad_request"],
    [`{"op":"ping","id":"${"x".repeat(200)}"}`, "bad_request"],
    ['{"op":"subscribe","pairs":[1]}', "bad_request"],
    ['{"op":"subscribe","rules":"price_change"}', "bad_request"],
    ['{"op":"subscribe","since":"5"}', "bad_request"],
    ['{"op":"unsubscribe","since":5}', "bad_request"],
  ])("refuses %s with %s", (text, code) => {
    expect(parseClientMessage(text, known)).toMatchObject({ ok: false, code });
  });

  it.each([
    ["{x", "message is not valid JSON"],
    ["[1]", "message must be a JSON object"],
    ['{"op":"ping","id":{}}', '"id" must be a string of at most 128 characters or a number'],
    ['{"id":"a"}', '"op" must be a string'],
    ['{"op":"nope"}', 'unknown op "nope" (expected subscribe, unsubscribe, snapshot or ping)'],
    ['{"op":"ping","extra":1}', 'unknown field "extra" for op ping'],
    ['{"op":"subscribe","since":-1,"extra":1}', 'unknown field "extra" for op subscribe'],
    ['{"op":"subscribe","channels":"alerts"}', '"channels" must be an array of strings'],
    ['{"op":"subscribe","channels":["news"]}', 'unknown channel "news" (expected alerts, prices, lifecycle)'],
    ['{"op":"subscribe","channels":[1]}', "unknown channel 1 (expected alerts, prices, lifecycle)"],
    ['{"op":"subscribe","since":1.5}', '"since" must be a non-negative integer seq'],
    ['{"op":"subscribe","minSeverity":"fatal"}', '"minSeverity" must be one of info, warning, critical'],
    ['{"op":"subscribe","pairs":"BTC/USD"}', '"pairs" must be an array of strings'],
    ['{"op":"subscribe","rules":[1]}', '"rules" must contain strings only'],
    ['{"op":"subscribe","pairs":["doge/eur"]}', 'unknown pair "doge/eur"'],
    ['{"op":"unsubscribe","rules":["moon"]}', 'unknown rule "moon"'],
  ])("explains %s to the client as %j", (text, message) => {
    expect(parseClientMessage(text, known)).toMatchObject({ ok: false, message });
  });
});

describe("subscription filters", () => {
  const subscribe = (extra: object) =>
    applySubscribe(EMPTY_FILTER, {
      op: "subscribe",
      id: null,
      channels: ["alerts", "prices", "lifecycle"],
      ...extra,
    });
  const alertEvent = (payload: AlertPayload): BusEvent => ({ type: "alert", seq: 1, alert: payload });
  const lifecycle: BusEvent = { type: "lifecycle", seq: 2, event: "started", at: "", version: "1" };

  it.each<[string, object, BusEvent, boolean]>([
    ["no filter, any alert", {}, alertEvent(alert()), true],
    ["pair filter, other pair", { pairs: ["ETH/USD"] }, alertEvent(alert()), false],
    ["pair filter, same pair", { pairs: ["BTC/USD"] }, alertEvent(alert()), true],
    [
      "pair filter, alert without a pair label",
      { pairs: ["BTC/USD"] },
      alertEvent({ ...alert(), labels: { vault: "v1" } }),
      false,
    ],
    ["rule filter, other rule", { rules: ["stale_price"] }, alertEvent(alert()), false],
    ["minSeverity above", { minSeverity: "critical" }, alertEvent(alert({ severity: "warning" })), false],
    ["minSeverity equal", { minSeverity: "warning" }, alertEvent(alert({ severity: "warning" })), true],
    ["resolved alerts pass like firing ones", {}, alertEvent(alert({ status: "resolved" })), true],
    ["prices by pair", { pairs: ["ETH/USD"] }, { type: "price", tick: tick("BTC/USD") }, false],
    ["lifecycle ignores pairs and rules", { pairs: ["ETH/USD"], rules: ["stale_price"] }, lifecycle, true],
  ])("%s", (_name, extra, event, expected) => {
    expect(matchesEvent(subscribe(extra), event)).toBe(expected);
  });

  it("delivers nothing before the first subscribe", () => {
    expect(matchesEvent(EMPTY_FILTER, lifecycle)).toBe(false);
  });

  it("unsubscribes channels and names, refusing ambiguous removals", () => {
    const filter = subscribe({ pairs: ["BTC/USD", "ETH/USD"] });
    const narrowed = applyUnsubscribe(filter, {
      op: "unsubscribe",
      id: null,
      channels: ["prices"],
      pairs: ["ETH/USD"],
    });
    expect(narrowed.ok && viewFilter(narrowed.filter)).toEqual({
      channels: ["alerts", "lifecycle"],
      pairs: ["BTC/USD"],
      rules: [],
      minSeverity: "info",
    });
    expect(
      applyUnsubscribe(filter, { op: "unsubscribe", id: null, channels: [], pairs: ["BTC/USD", "ETH/USD"] })
        .ok,
    ).toBe(false);
    expect(
      applyUnsubscribe(filter, { op: "unsubscribe", id: null, channels: [], rules: ["price_change"] }).ok,
    ).toBe(false);
  });

  it("clears a pair filter with pairs: []", () => {
    const cleared = applySubscribe(subscribe({ pairs: ["BTC/USD"] }), {
      op: "subscribe",
      id: null,
      channels: [],
      pairs: [],
    });
    expect(cleared.pairs).toBeNull();
  });
});

describe("createRateLimiter", () => {
  it("allows a burst, refuses beyond it, refills over time and flags a sustained flood", () => {
    const limiter = createRateLimiter(2, 0);
    expect([limiter.take(0), limiter.take(0), limiter.take(0)]).toEqual(["ok", "ok", "limited"]);
    expect(limiter.take(500)).toBe("ok");
    const verdicts = Array.from({ length: 12 }, () => limiter.take(500));
    expect(verdicts.slice(0, 10).every((verdict) => verdict === "limited")).toBe(true);
    expect(verdicts.at(-1)).toBe("flood");
  });

  it("never flags a client sending at twice the rate as a flood", () => {
    const limiter = createRateLimiter(10, 0);
    const verdicts = new Set<string>();
    for (let ms = 0; ms < 60_000; ms += 50) verdicts.add(limiter.take(ms));
    expect(verdicts).toEqual(new Set(["ok", "limited"]));
  });
});
