// The simulator's SSE price stream over real sockets: live format, same prices as /data, validation, keep-alive, faults.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WirePairPrice } from "../../src/upstream/wire.js";
import { pairPriceResponse, responseErrors } from "../fixtures/response-schemas.js";
import { getJson, startTestSim, type TestSim } from "./helpers.js";
import { openSse, sleep } from "./sse.js";

const LIVE_EXAMPLE = JSON.parse(
  readFileSync(new URL("../fixtures/streaming/sse_multi_stream_update.json", import.meta.url), "utf8"),
) as WirePairPrice[];
const STREAM = "/node/v1/data/multi/stream";
const BTC_ETH = `${STREAM}?pairs[]=BTC/USD&pairs[]=ETH/USD&interval=100ms&aggregation=median&historical_prices=5`;

let t: TestSim;
beforeAll(async () => {
  t = await startTestSim({ streamKeepAliveMs: 60 });
  t.clock.advance(3_600_000);
});
afterAll(() => t.sim.close());

describe("GET /node/v1/data/multi/stream", () => {
  it("sends a historical event, then unnamed events in the live format, each price equal to /data's", async () => {
    const sse = await openSse(`${t.sim.url}${BTC_ETH}`);
    try {
      expect(sse.status).toBe(200);
      expect(sse.contentType).toBe("text/event-stream");
      const historical = await sse.event(0);
      expect(historical.event).toBe("historical");
      const series = JSON.parse(historical.data) as WirePairPrice[][];
      expect(series.map((s) => s.length)).toEqual([5, 5]);
      expect(series.map((s) => s[0]?.pair_id)).toEqual(["BTC/USD", "ETH/USD"]);
      const update = await sse.event(1);
      expect(update.event).toBeUndefined();
      const prices = JSON.parse(update.data) as WirePairPrice[];
      expect(prices.map((p) => p.pair_id)).toEqual(["BTC/USD", "ETH/USD"]);
      for (const price of prices) {
        expect(responseErrors(pairPriceResponse, price)).toEqual([]);
        // the live server's key order and nulls, as in its example payload
        expect(Object.keys(price).sort()).toEqual(Object.keys(LIVE_EXAMPLE[0]!).sort());
        expect(price.components).toBeNull();
        const polled = await getJson<WirePairPrice>(
          t.sim,
          `/node/v1/data/${price.pair_id}?interval=100ms&aggregation=median&routing=false`,
        );
        expect(price).toEqual(polled.body);
      }
      // the newest historical price is the price at the same instant
      expect(series[0]?.at(-1)).toEqual(prices[0]);
    } finally {
      sse.close();
    }
  });

  it("sends keep-alive comments between events", async () => {
    const sse = await openSse(`${t.sim.url}${BTC_ETH}`);
    await sleep(250);
    sse.close();
    expect(sse.comments.filter((c) => c.trim() === "keep-alive-text").length).toBeGreaterThanOrEqual(2);
  });

  it.each([
    ["twap", "pairs[]=BTC/USD&interval=1s&aggregation=twap"],
    ["no aggregation (the live default is twap)", "pairs[]=BTC/USD&interval=1s"],
    ["routing", "pairs[]=BTC/USD&interval=1s&aggregation=median&routing=true"],
    ["a timestamp", "pairs[]=BTC/USD&interval=1s&aggregation=median&timestamp=1700000000"],
  ])("answers %s with its one error event and ends the stream", async (_, query) => {
    const sse = await openSse(`${t.sim.url}${STREAM}?${query}`);
    await sse.ended;
    expect(sse.events).toEqual([
      {
        event: "error",
        id: undefined,
        data: JSON.stringify({ error: "SSE streaming for entries only works with no routing & for median." }),
      },
    ]);
  });

  it.each([
    [
      "an unknown pair",
      "pairs[]=BTC/USD&pairs[]=NOPE/USD&aggregation=median",
      404,
      "Entry not found: NOPE/USD",
    ],
    [
      "a routed pair (no routing on the stream)",
      "pairs[]=BTC/ETH&aggregation=median",
      404,
      "Entry not found",
    ],
    [
      "a bad interval",
      "pairs[]=BTC/USD&interval=2s&aggregation=median",
      400,
      "interval: unknown variant `2s`",
    ],
    ["5min with median", "pairs[]=BTC/USD&interval=5min&aggregation=median", 400, "Unsupported interval"],
    ["no pairs", "interval=1s&aggregation=median", 400, "missing field `pairs[]`"],
    [
      "a bad historical_prices",
      "pairs[]=BTC/USD&aggregation=median&historical_prices=x",
      400,
      "historical_prices",
    ],
  ])("refuses %s with an HTTP error before streaming", async (_, query, status, text) => {
    const sse = await openSse(`${t.sim.url}${STREAM}?${query}`);
    expect(sse.status).toBe(status);
    expect(await sse.text()).toContain(text);
  });
});

describe("the stream with API keys", () => {
  it("requires x-api-key when keys are configured", async () => {
    const keyed = await startTestSim({ apiKeys: ["k1"] });
    try {
      const refused = await openSse(`${keyed.sim.url}${BTC_ETH}`);
      expect(refused.status).toBe(401);
      await refused.text();
      const sse = await openSse(`${keyed.sim.url}${BTC_ETH}`, { "x-api-key": "k1" });
      expect(sse.status).toBe(200);
      expect((await sse.event(0)).event).toBe("historical");
      sse.close();
    } finally {
      await keyed.sim.close();
    }
  });
});

describe("stream faults", () => {
  it("streamStall: the connection stays open with keep-alives but no events; a pair stall leaves that pair out", async () => {
    const sse = await openSse(`${t.sim.url}${BTC_ETH}`);
    try {
      await sse.event(1);
      const id = t.sim.control.inject({ kind: "streamStall" });
      await sleep(150); // a tick in flight may still land
      const before = sse.events.length;
      const comments = sse.comments.length;
      await sleep(350);
      expect(sse.events.length).toBe(before);
      expect(sse.comments.length).toBeGreaterThan(comments);
      t.sim.control.remove(id);
      t.sim.control.inject({ kind: "streamStall", pair: "ETH/USD" }, { durationMs: 60_000 });
      await sleep(150);
      const next = await sse.event(sse.events.length);
      expect((JSON.parse(next.data) as WirePairPrice[]).map((p) => p.pair_id)).toEqual(["BTC/USD"]);
    } finally {
      t.sim.control.clear();
      sse.close();
    }
  });

  it("streamMalformed: events carry broken JSON", async () => {
    const sse = await openSse(`${t.sim.url}${BTC_ETH}`);
    try {
      await sse.event(1);
      t.sim.control.inject({ kind: "streamMalformed" });
      await sleep(150);
      const bad = await sse.event(sse.events.length);
      expect(() => JSON.parse(bad.data) as unknown).toThrow();
    } finally {
      t.sim.control.clear();
      sse.close();
    }
  });

  it("streamDisconnect: open streams are cut, and new ones too while it lasts", async () => {
    const sse = await openSse(`${t.sim.url}${BTC_ETH}`);
    await sse.event(1);
    const id = t.sim.control.inject({ kind: "streamDisconnect" });
    try {
      await sse.ended;
      await expect(openSse(`${t.sim.url}${BTC_ETH}`)).rejects.toThrow();
    } finally {
      t.sim.control.remove(id);
    }
    const again = await openSse(`${t.sim.url}${BTC_ETH}`);
    expect((await again.event(1)).event).toBeUndefined();
    again.close();
  });

  it("an outage fault on multi_stream answers with its HTTP status", async () => {
    const id = t.sim.control.inject({ kind: "outage", status: 503, endpoint: "multi_stream" });
    try {
      const sse = await openSse(`${t.sim.url}${BTC_ETH}`);
      expect(sse.status).toBe(503);
      await sse.text();
    } finally {
      t.sim.control.remove(id);
    }
  });
});
