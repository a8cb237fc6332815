// The bounded candle decoder of the warm-up: on a newest-first body it stops at its bound, any other order is read
// in full, and it keeps exactly the candles the full decoder keeps from that bound on.
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { decodeCandleSeriesBody, type SkippedItem } from "../../src/upstream/index.js";
import { createHarness, type Harness } from "./harness.js";
import { sendJson, startServer, type TestServer } from "./helpers.js";

const MINUTE_MS = 60_000;
const T0_MS = Date.UTC(2026, 10, 27, 12, 0, 0);

/** A candle of the live server's shape starting `minutesAgo` minutes before T0, its close telling it apart. */
const candle = (minutesAgo: number): Record<string, unknown> => {
  const price = String(80_000n * 10n ** 18n + BigInt(minutesAgo) * 10n ** 15n);
  const time = new Date(T0_MS - minutesAgo * MINUTE_MS).toISOString().slice(0, 19);
  return { time, open: price, high: price, low: price, close: price };
};

const body = (data: readonly unknown[]): string => JSON.stringify({ pair_id: "BTC/USD", data });
/** Candles from `newest` to `oldest` minutes ago, newest first (as the live server sends them). */
const newestFirst = (newest: number, oldest: number): Record<string, unknown>[] =>
  Array.from({ length: oldest - newest + 1 }, (_, i) => candle(newest + i));

/** The bounded decode and the skips it reported. */
function decodeSince(text: string, sinceMs: number): { minutesAgo: number[]; skipped: SkippedItem[] } {
  const skipped: SkippedItem[] = [];
  const series = decodeCandleSeriesBody(text, (item) => skipped.push(item), sinceMs);
  return { minutesAgo: series.candles.map((c) => (T0_MS - c.timeMs) / MINUTE_MS), skipped };
}

/** The full decode cut at `sinceMs`, as the bounded one must equal it where it reads. */
function decodeAllSince(text: string, sinceMs: number): { minutesAgo: number[]; skipped: SkippedItem[] } {
  const skipped: SkippedItem[] = [];
  const series = decodeCandleSeriesBody(text, (item) => skipped.push(item));
  const kept = series.candles.filter((c) => c.timeMs >= sinceMs);
  return { minutesAgo: kept.map((c) => (T0_MS - c.timeMs) / MINUTE_MS), skipped };
}

const since = (minutesAgo: number): number => T0_MS - minutesAgo * MINUTE_MS;

type ItemKind = "ok" | "badClose" | "badTime" | "notObject";
/** The field a malformed item is reported by. */
const BAD_FIELD = { badClose: "close", badTime: "time" } as const;
/** Candles (minutes ago) of the live server's shape, one in nine malformed, in the order drawn. */
const entries = fc.array(
  fc.tuple(
    fc.integer({ min: 0, max: 200 }),
    fc.oneof(
      { weight: 8, arbitrary: fc.constant<ItemKind>("ok") },
      { weight: 1, arbitrary: fc.constantFrom<ItemKind>("badClose", "badTime", "notObject") },
    ),
  ),
  { maxLength: 80 },
);
/** A bound in minutes ago, reaching past both ends of the candles. */
const bound = fc.integer({ min: -5, max: 205 });

/** The list item an entry stands for. */
function item([minutesAgo, kind]: readonly [number, ItemKind]): unknown {
  const c = candle(minutesAgo);
  if (kind === "badClose") return { ...c, close: "x" };
  if (kind === "badTime") return { ...c, time: "x" };
  return kind === "notObject" ? null : c;
}

/** The entries in the order drawn but for the newest one, moved last. */
function newestMovedLast<T extends readonly [number, ItemKind]>(list: T[]): T[] {
  const newest = list.reduce((best, entry, i) => (entry[0] < (list[best]?.[0] ?? Infinity) ? i : best), 0);
  return [...list.slice(0, newest), ...list.slice(newest + 1), ...list.slice(newest, newest + 1)];
}

describe("decodeCandleSeriesBody with sinceMs", () => {
  it("keeps the candles from the bound on and reads no further on a newest-first body", () => {
    const data: unknown[] = newestFirst(0, 9_999);
    // malformed items past the bound: a full decode reports them, a read that stopped never sees them
    data[200] = { ...candle(200), close: "0x12" };
    data[300] = "not a candle";
    const text = body(data);
    const result = decodeSince(text, since(60));
    expect(result.minutesAgo).toEqual(Array.from({ length: 61 }, (_, i) => i));
    expect(result.skipped).toEqual([]);
    expect(decodeAllSince(text, since(60)).minutesAgo).toEqual(result.minutesAgo);
    expect(decodeAllSince(text, since(60)).skipped.map((s) => s.field)).toEqual([
      "data[200].close",
      "data[300]",
    ]);
  });

  it("keeps every candle of an oldest-first body (the order is not newest-first: all are read)", () => {
    const text = body(newestFirst(0, 500).reverse());
    expect(decodeSince(text, since(60)).minutesAgo).toEqual(Array.from({ length: 61 }, (_, i) => 60 - i));
  });

  it.each([
    { name: "the newest candle appended last", order: [...newestFirst(1, 200), candle(0)] },
    {
      name: "a newer candle before the bound",
      order: [candle(5), candle(3), candle(70), candle(2), candle(90)],
    },
    { name: "shuffled", order: [17, 3, 120, 61, 0, 59, 60, 200, 45, 1].map(candle) },
  ])("reads an unordered body in full and keeps what the full decoder keeps: $name", ({ order }) => {
    const text = body(order);
    const bounded = decodeSince(text, since(60));
    expect(bounded.minutesAgo).toEqual(decodeAllSince(text, since(60)).minutesAgo);
    expect(bounded.minutesAgo.length).toBeGreaterThan(0);
  });

  it("does not read past the stop: a newer candle there, in a body descending to it and ending older, is missed", () => {
    // the limit of the early stop, which the live server's newest-first order never meets
    const text = body([candle(5), candle(70), candle(3), candle(80), candle(90)]);
    expect(decodeSince(text, since(60)).minutesAgo).toEqual([5]);
  });

  it("skips and reports a malformed candle inside the range exactly as the full decoder does", () => {
    const data: unknown[] = newestFirst(0, 500);
    data[2] = { ...candle(2), close: 8.2e22 };
    data[5] = { ...candle(5), time: "yesterday" };
    data[7] = 7;
    data[9] = { ...candle(9), open: "-1" };
    const text = body(data);
    const bounded = decodeSince(text, since(60));
    const full = decodeAllSince(text, since(60));
    expect(bounded.skipped).toEqual(full.skipped.slice(0, 4));
    expect(bounded.skipped.map((s) => s.field)).toEqual([
      "data[2].close",
      "data[5].time",
      "data[7]",
      "data[9].open",
    ]);
    expect(bounded.minutesAgo).toEqual(full.minutesAgo);
    expect(bounded.minutesAgo).not.toContain(2);
  });

  it("drops a candle older than the bound without reading its prices, in any order", () => {
    // unordered, so every item is read: the bad old candle is seen, dropped, and not reported
    const text = body([candle(3), { ...candle(90), close: "bad" }, candle(1), candle(61)]);
    expect(decodeSince(text, since(60))).toEqual({ minutesAgo: [3, 1], skipped: [] });
  });

  it("reports an item without a readable time even when unordered, and a bad last item reads the body in full", () => {
    const text = body([...newestFirst(0, 100), { close: "1" }]);
    const result = decodeSince(text, since(60));
    expect(result.minutesAgo).toEqual(Array.from({ length: 61 }, (_, i) => i));
    expect(result.skipped.map((s) => s.field)).toEqual(["data[101].time"]);
  });

  it.each([
    { name: "empty data", data: [] },
    { name: "every candle older than the bound", data: newestFirst(61, 9_000) },
  ])("keeps nothing of $name", ({ data }) => {
    expect(decodeSince(body(data), since(60))).toEqual({ minutesAgo: [], skipped: [] });
  });

  it("equals the full decoder cut at the bound on any newest-first body, malformed items included", () => {
    fc.assert(
      fc.property(entries, bound, (list, boundMinutes) => {
        const text = body([...list].sort((a, b) => a[0] - b[0]).map(item));
        const bounded = decodeSince(text, since(boundMinutes));
        const full = decodeAllSince(text, since(boundMinutes));
        expect(bounded.minutesAgo).toEqual(full.minutesAgo);
        // every skip reported is one the full decoder reports (those of the kept range among them)
        for (const skip of bounded.skipped) expect(full.skipped).toContainEqual(skip);
      }),
    );
  });

  it("equals the full decoder cut at the bound when the newest candle comes last (oldest first, or appended)", () => {
    const order = fc.constantFrom("oldestFirst", "newestAppended");
    fc.assert(
      fc.property(entries, bound, order, (list, boundMinutes, kind) => {
        const sorted = kind === "oldestFirst" ? [...list].sort((a, b) => b[0] - a[0]) : newestMovedLast(list);
        const text = body(sorted.map(item));
        const bounded = decodeSince(text, since(boundMinutes));
        const full = decodeAllSince(text, since(boundMinutes));
        expect(bounded.minutesAgo).toEqual(full.minutesAgo);
        for (const skip of bounded.skipped) expect(full.skipped).toContainEqual(skip);
      }),
    );
  });

  it("keeps, in any order, a first part of what the full decoder keeps from the bound on", () => {
    fc.assert(
      fc.property(entries, bound, (list, boundMinutes) => {
        const text = body(list.map(item));
        const bounded = decodeSince(text, since(boundMinutes));
        const full = decodeAllSince(text, since(boundMinutes));
        expect(bounded.minutesAgo).toEqual(full.minutesAgo.slice(0, bounded.minutesAgo.length));
        for (const skip of bounded.skipped) expect(full.skipped).toContainEqual(skip);
      }),
    );
  });

  it("decodes without a bound every readable candle in the order sent and reports every other item", () => {
    fc.assert(
      fc.property(entries, (list) => {
        const skipped: SkippedItem[] = [];
        const series = decodeCandleSeriesBody(body(list.map(item)), (s) => skipped.push(s));
        const ok = list.filter(([, kind]) => kind === "ok").map(([minutesAgo]) => minutesAgo);
        expect(series.candles.map((c) => (T0_MS - c.timeMs) / MINUTE_MS)).toEqual(ok);
        const expectedFields = list.flatMap(([, kind], i) =>
          kind === "ok" ? [] : [kind === "notObject" ? `data[${i}]` : `data[${i}].${BAD_FIELD[kind]}`],
        );
        expect(skipped.map((s) => s.field)).toEqual(expectedFields);
      }),
    );
  });

  it("refuses a body the full decoder refuses", () => {
    expect(() => decodeCandleSeriesBody('{"pair_id":"BTC/USD","data":[', undefined, since(60))).toThrow(
      expect.objectContaining({ code: "PM_ERR_UPSTREAM_DECODE" }),
    );
    expect(() => decodeCandleSeriesBody('{"pair_id":"BTC/USD"}', undefined, since(60))).toThrow(
      /data: expected array/,
    );
  });
});

describe("getCandlesticks with sinceMs", () => {
  let server: TestServer | undefined;
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    await server?.close();
  });

  it("decodes the candles from sinceMs on; without it, every candle", async () => {
    server = await startServer((_req, res) => sendJson(res, 200, body(newestFirst(0, 1_000))));
    harness = createHarness(server.url);
    const bounded = await harness.client.getCandlesticks({ pair: "BTC/USD" }, { sinceMs: since(60) });
    expect(bounded.candles).toHaveLength(61);
    expect(bounded.candles.at(-1)?.timeMs).toBe(since(60));
    const all = await harness.client.getCandlesticks({ pair: "BTC/USD" });
    expect(all.candles).toHaveLength(1_001);
  });
});
