// The daemon against the simulator, through a front that counts requests: with the shipped windows (10 s, 1 min) no
// candle request reaches the simulator, while a target with a 1 h window is still warmed; the skip is logged once.
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { startSimulator, type RunningSimulator } from "../../src/simulator/server.js";
import { startTestApp, type TestApp } from "./harness.js";
import { waitFor } from "../wait-for.js";

const CANDLES_PATH = "/node/v1/aggregation/candlestick/";

/** An HTTP front on 127.0.0.1:0 passing every request to `target` and recording its path and query. */
async function countingFront(
  target: RunningSimulator,
): Promise<{ url: string; urls: string[]; server: Server }> {
  const urls: string[] = [];
  const server = createServer((req, res) => {
    urls.push(req.url ?? "");
    const upstream = request(
      { host: "127.0.0.1", port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, urls, server };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it("fetches candles only for the target with a window longer than a 1min candle", async () => {
  const sim = await startSimulator({ host: "127.0.0.1", port: 0, seed: 7 });
  cleanups.push(() => sim.close());
  const front = await countingFront(sim);
  cleanups.push(() => new Promise<void>((resolve) => front.server.close(() => resolve())));
  front.server.keepAliveTimeout = 1_000;
  const t: TestApp = await startTestApp({
    upstream: { url: front.url },
    monitors: {
      // in this order: a warm-up of BTC or SOL would be sent before ETH's (the gate admits in arrival order)
      offchain: ["BTC/USD", "SOL/USD", "ETH/USD"].map((pair) => ({ pair, periodMs: 200 })),
      warmup: { enabled: true, interval: "1min", lookbackMs: 3_600_000 },
    },
    rules: [
      { kind: "price_change", id: "price_change_10s", windowMs: 10_000, threshold: 0.5 },
      { kind: "price_change", id: "price_change_1min", windowMs: 60_000, threshold: 0.5 },
      {
        kind: "price_change",
        id: "price_change_1h",
        windowMs: 3_600_000,
        threshold: 0.5,
        pairs: ["ETH/USD"],
      },
    ],
  });
  cleanups.push(async () => void (await t.stop()));
  const candlePairs = (): string[] =>
    front.urls
      .filter((url) => url.startsWith(CANDLES_PATH))
      .map((url) => url.slice(CANDLES_PATH.length).split("?")[0]!);

  await waitFor(() => expect(candlePairs()).toContain("ETH/USD"), { timeout: 10_000, interval: 50 });
  // a moment more for anything sent alongside ETH's request
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(candlePairs()).toEqual(["ETH/USD"]);
  const polled = new Set(
    front.urls.filter((url) => url.startsWith("/node/v1/data/")).map((url) => url.split("?")[0]),
  );
  expect(polled.size).toBe(3);

  const notes = t.logs.lines.filter((line) => line.msg === "target history not warmed from candles");
  expect(notes.map((line) => line["note"])).toEqual([
    expect.stringMatching(
      /^2 off-chain target\(s\) not warmed from 1min candles \(no window of their rules \(10s, 1min\) is longer than the 1min between two closes: .*\); their history fills from their own data: offchain:BTC\/USD:spot:median:1s \(monitors\.offchain\[0\]\), offchain:SOL\/USD:spot:median:1s \(monitors\.offchain\[1\]\)$/,
    ),
  ]);

  // a reload that changes nothing about warm-up logs no note again; one that changes a note logs that one
  await t.app.reload(t.config);
  const rules = t.config.rules.filter((r) => r.id !== "price_change_10s");
  await t.app.reload({ ...t.config, rules });
  const notesNow = t.logs.lines.filter((line) => line.msg === "target history not warmed from candles");
  expect(notesNow.map((line) => line["note"])).toEqual([
    notes[0]!["note"],
    expect.stringMatching(
      /^2 off-chain target\(s\) not warmed from 1min candles \(no window of their rules \(1min\) /,
    ),
  ]);
});
