// The SSE price stream client: event decoding (table), and multiStream$ over real sockets (simulator and a bare server).
import { readFileSync } from "node:fs";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SkippedItem } from "../../src/upstream/decode.js";
import { decodeStreamEvent, multiStreamPath } from "../../src/upstream/multi-stream.js";
import {
  multiStream$,
  streamReconnectBackoff,
  type MultiStreamOptions,
  type StreamSignal,
} from "../../src/upstream/multi-stream-client.js";
import { startTestSim, type TestSim } from "../simulator/helpers.js";
import { startServer } from "./helpers.js";

const LIVE_EXAMPLE = readFileSync(
  new URL("../fixtures/streaming/sse_multi_stream_update.json", import.meta.url),
  "utf8",
);

describe("decodeStreamEvent", () => {
  it("decodes the live server's example update with the pair-price decoder (exact prices, ms timestamps)", () => {
    const event = decodeStreamEvent({ data: LIVE_EXAMPLE });
    expect(event.kind).toBe("prices");
    if (event.kind !== "prices") return;
    expect(event.prices.map((p) => [p.pairId, p.price.text, p.timestampMs, p.numSources])).toEqual([
      ["BTC/USD", "82069.27", 1741594457412, 5],
      ["ETH/USD", "2034.118", 1741594457087, 6],
    ]);
    expect(event.prices.every((p) => p.components.length === 0)).toBe(true);
  });

  it("leaves a bad price out (reported), keeps the others", () => {
    const [good, bad] = JSON.parse(LIVE_EXAMPLE) as Record<string, unknown>[];
    const skipped: SkippedItem[] = [];
    const event = decodeStreamEvent({ data: JSON.stringify([good, { ...bad, price: "12" }]) }, (s) =>
      skipped.push(s),
    );
    expect(event.kind === "prices" && event.prices.map((p) => p.pairId)).toEqual(["BTC/USD"]);
    expect(skipped).toEqual([
      { endpoint: "multi_stream", field: "[1].price", expected: "0x-prefixed hex string" },
    ]);
  });

  it("flattens the historical event's per-pair series", () => {
    const [btc, eth] = JSON.parse(LIVE_EXAMPLE) as unknown[];
    const event = decodeStreamEvent({ event: "historical", data: JSON.stringify([[btc, btc], [eth]]) });
    expect(event.kind === "historical" && event.prices.map((p) => p.pairId)).toEqual([
      "BTC/USD",
      "BTC/USD",
      "ETH/USD",
    ]);
  });

  it.each([
    [
      {
        event: "error",
        data: '{"error":"SSE streaming for entries only works with no routing & for median."}',
      },
    ],
    [{ data: '{"error":"boom"}' }],
  ])("reads the server's error event as a PM_ERR_UPSTREAM_STREAM refusal", (message) => {
    const event = decodeStreamEvent(message);
    expect(event.kind === "refused" && event.error.code).toBe("PM_ERR_UPSTREAM_STREAM");
  });

  it.each([["[1,2"], [""], ['"text"']])("throws PM_ERR_UPSTREAM_DECODE on data %j", (data) => {
    expect(() => decodeStreamEvent({ data })).toThrow(
      expect.objectContaining({ code: "PM_ERR_UPSTREAM_DECODE" }),
    );
  });

  it("builds the query with every parameter explicit", () => {
    expect(multiStreamPath(["btc/usd", "ETH/USD"], "1s", 0)).toBe(
      "/node/v1/data/multi/stream?pairs[]=BTC%2FUSD&pairs[]=ETH%2FUSD&interval=1s&aggregation=median&historical_prices=0",
    );
  });
});

const agent = new Agent({ keepAliveTimeout: 500, keepAliveMaxTimeout: 500 });

function options(url: string, overrides: Partial<MultiStreamOptions> = {}): MultiStreamOptions {
  return {
    baseUrl: url,
    dispatcher: agent,
    pairs: ["BTC/USD", "ETH/USD"],
    interval: "100ms",
    historicalPrices: 2,
    connectTimeoutMs: 2_000,
    silenceMs: 400,
    reconnect: { ...streamReconnectBackoff(200), baseDelayMs: 50 },
    random: () => 0.5,
    ...overrides,
  };
}

/** Subscribe and collect signals until `done` says so (or the timeout). */
async function collect(
  opts: MultiStreamOptions,
  done: (signals: readonly StreamSignal[]) => boolean,
  timeoutMs = 5_000,
): Promise<StreamSignal[]> {
  const signals: StreamSignal[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      subscription.unsubscribe();
      reject(new Error(`timed out with ${JSON.stringify(signals.map((s) => s.kind))}`));
    }, timeoutMs);
    const subscription = multiStream$(opts).subscribe((signal) => {
      signals.push(signal);
      if (!done(signals)) return;
      clearTimeout(timer);
      queueMicrotask(() => subscription.unsubscribe());
      resolve(signals);
    });
  });
}

const kinds = (signals: readonly StreamSignal[]): string[] =>
  signals.map((s) =>
    s.kind === "event" ? s.event.kind : s.kind === "down" ? `down:${s.error.code}` : s.kind,
  );

describe("multiStream$ against the simulator", () => {
  let t: TestSim;
  beforeAll(async () => {
    t = await startTestSim({ apiKeys: ["k"] });
    t.clock.advance(60_000);
  });
  afterAll(() => t.sim.close());

  it("connects with the key, gets the history, then prices", async () => {
    const signals = await collect(options(t.sim.url, { apiKey: "k" }), (s) => kinds(s).includes("prices"));
    expect(kinds(signals)).toEqual(["connected", "historical", "prices"]);
  });

  it("a 401 is a down signal with the HTTP status, then it tries again", async () => {
    const signals = await collect(options(t.sim.url), (s) => s.filter((x) => x.kind === "down").length === 2);
    const down = signals[0];
    expect(down?.kind === "down" && [down.error.code, down.error.details.status]).toEqual([
      "PM_ERR_UPSTREAM_HTTP",
      401,
    ]);
  });

  it("reconnects after a disconnect, and reports silence during a stall as PM_ERR_UPSTREAM_STREAM_STALE", async () => {
    const opts = options(t.sim.url, { apiKey: "k" });
    let injected = false;
    const signals = await collect(opts, (s) => {
      if (!injected && kinds(s).includes("prices")) {
        injected = true;
        t.sim.control.inject({ kind: "streamDisconnect" }, { durationMs: 0 });
        t.sim.control.inject({ kind: "streamStall" }, { delayMs: 0, durationMs: 100_000 });
      }
      return kinds(s).includes("down:PM_ERR_UPSTREAM_STREAM_STALE");
    });
    t.sim.control.clear();
    expect(kinds(signals)).toContain("down:PM_ERR_UPSTREAM_STREAM_STALE");
    const again = await collect(opts, (s) => kinds(s).includes("prices"));
    expect(kinds(again)).toEqual(["connected", "historical", "prices"]);
  });

  it("a malformed event takes the connection down as a decode error and the stream comes back", async () => {
    const id = t.sim.control.inject({ kind: "streamMalformed" });
    let removed = false;
    const signals = await collect(options(t.sim.url, { apiKey: "k" }), (s) => {
      if (!removed && kinds(s).includes("down:PM_ERR_UPSTREAM_DECODE")) {
        removed = true;
        t.sim.control.remove(id);
      }
      return removed && kinds(s).at(-1) === "prices";
    });
    expect(kinds(signals).slice(0, 3)).toEqual(["connected", "historical", "down:PM_ERR_UPSTREAM_DECODE"]);
  });
});

describe("multiStream$ against a bare server", () => {
  it("sends User-Agent and x-api-key, and reads a server close as PM_ERR_UPSTREAM_STREAM", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`: keep-alive-text\n\ndata: ${LIVE_EXAMPLE.replaceAll("\n", "")}\n\n`);
    });
    try {
      const signals = await collect(options(server.url, { apiKey: "secret" }), (s) =>
        kinds(s).includes("down:PM_ERR_UPSTREAM_STREAM"),
      );
      expect(kinds(signals)).toEqual(["connected", "keepalive", "prices", "down:PM_ERR_UPSTREAM_STREAM"]);
      expect(server.requests[0]?.headers["user-agent"]).toMatch(/^pragma-monitor\//);
      expect(server.requests[0]?.headers["x-api-key"]).toBe("secret");
    } finally {
      await server.close();
    }
  });

  it("a first event still arriving in slow chunks is not silence; keep-alives alone still are", async () => {
    const body = `data: ${LIVE_EXAMPLE.replaceAll("\n", "")}\n\n`;
    const parts = 6; // 6 × 150 ms = 900 ms for the first event, silenceMs is 400
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const size = Math.ceil(body.length / parts);
      let i = 0;
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        if (i < parts) res.write(body.slice(i * size, (i + 1) * size));
        else res.write(": keep-alive\n\n"); // then only keep-alives: silent, so stale after silenceMs
        i++;
      }, 150);
      res.on("close", () => clearInterval(timer));
    });
    try {
      const signals = await collect(options(server.url), (s) => kinds(s).some((k) => k.startsWith("down")));
      // the chunks before the event completes are reported as progress (the feed keeps its targets streaming)
      expect(
        kinds(signals)
          .filter((k) => k !== "keepalive")
          .slice(0, 2),
      ).toEqual(["connected", "progress"]);
      expect(kinds(signals).filter((k) => k !== "keepalive" && k !== "progress")).toEqual([
        "connected",
        "prices",
        "down:PM_ERR_UPSTREAM_STREAM_STALE",
      ]);
    } finally {
      await server.close();
    }
  });

  it("drops a connection whose event outgrows the buffer bound", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: [${"1,".repeat(5_000)}`);
    });
    try {
      const signals = await collect(options(server.url, { maxEventChars: 1_000 }), (s) =>
        kinds(s).some((k) => k.startsWith("down")),
      );
      expect(kinds(signals).filter((k) => k !== "progress")).toEqual([
        "connected",
        "down:PM_ERR_UPSTREAM_DECODE",
      ]);
    } finally {
      await server.close();
    }
  });
});
