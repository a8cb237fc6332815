// The streaming upstream end to end: the built daemon (`run`) and the simulator (`simulate`) as separate processes,
// a WebSocket client, and the simulator's fault control endpoint: a streamed step alerts, a stall falls back to
// polls with upstream_error and recovers, a disconnect reconnects.
import { afterEach, beforeAll, expect, it } from "vitest";
import { ensureBuilt, killAllDaemons, startDaemon, startSimulatorProcess } from "./daemon.js";
import {
  makeWorkDir,
  postFault,
  removeFault,
  removeWorkDirs,
  writeConfig,
  type WorkDir,
} from "./fixtures.js";
import { closeAllWs, connectWs, type ServerFrame } from "./ws-client.js";

beforeAll(() => ensureBuilt(), 120_000);
afterEach(async () => {
  closeAllWs();
  await killAllDaemons();
  removeWorkDirs();
});

/** BTC/USD and ETH/USD streamed at 100 ms from the separate simulator; price_change 2 % over 10 s; upstream_error at 1 failure. */
function streamingConfig(work: WorkDir, simulatorUrl: string): Record<string, unknown> {
  return {
    upstream: {
      url: simulatorUrl,
      transport: "stream",
      retry: { maxAttempts: 1 },
      stream: { staleIntervals: 3, recoverEvents: 3, historicalPrices: 5, maxReconnectDelayMs: 1_000 },
    },
    monitors: {
      offchain: ["BTC/USD", "ETH/USD"].map((pair) => ({ pair, interval: "100ms", periodMs: 500 })),
      onchain: [],
      publishers: [],
      funding: [],
      vaults: [],
      warmup: { enabled: false },
    },
    rules: [
      { kind: "price_change", windowMs: 10_000, threshold: 0.02 },
      { kind: "upstream_error", threshold: 1 },
    ],
    sinks: [],
    state: { dir: work.stateDir },
    shutdown: { drainTimeoutMs: 2_000 },
  };
}

/** The value of a sample in the daemon's /metrics text (0 when absent). */
async function sample(httpUrl: string, series: string): Promise<number> {
  const text = await (await fetch(`${httpUrl}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const isAlert = (rule: string, status: string, pair: string) => (frame: ServerFrame) =>
  frame.type === "alert" &&
  frame.alert.rule === rule &&
  frame.alert.status === status &&
  frame.alert.labels["pair"] === pair;

const isPrice = (pair: string) => (frame: ServerFrame) => frame.type === "price" && frame.tick.pair === pair;

const POLLS_OK = 'pragma_monitor_polls_total{endpoint="pair_price",outcome="ok"}';

it("a streamed step alerts at a WebSocket client; a stall falls back to polls with upstream_error and recovers; a disconnect reconnects", async () => {
  const work = makeWorkDir();
  const simulatorUrl = (await startSimulatorProcess(work.dir)).url;
  writeConfig(work, streamingConfig(work, simulatorUrl));
  const daemon = await startDaemon(work.configFile, { cwd: work.dir, simulatorUrl });
  const client = await connectWs(daemon.wsUrl);
  // price ticks are published only while a client wants them: subscribe to prices too
  await client.subscribe({ channels: ["alerts", "prices"] });
  const count = (predicate: (frame: ServerFrame) => boolean): number =>
    client.frames.items.filter(predicate).length;
  const waitFrames = async (
    what: string,
    predicate: (frame: ServerFrame) => boolean,
    atLeast: number,
    timeoutMs = 10_000,
  ) => {
    const deadline = Date.now() + timeoutMs;
    while (count(predicate) < atLeast) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  // 1. prices flow over the stream, a step alerts, and nothing was polled
  await waitFrames("streamed BTC/USD prices", isPrice("BTC/USD"), 5);
  await postFault(simulatorUrl, { kind: "spike", pair: "BTC/USD", factor: 1.06 }, 30_000);
  await client.frames.waitFor(isAlert("price_change", "firing", "BTC/USD"), {
    timeoutMs: 10_000,
    what: "price_change firing for BTC/USD",
  });
  expect(await sample(daemon.httpUrl, POLLS_OK)).toBe(0);

  // 2. ETH/USD's stream stalls: upstream_error on ETH/USD only, fallback polls; the stall ends: back to the stream
  const stall = await postFault(simulatorUrl, { kind: "streamStall", pair: "ETH/USD" });
  await daemon.waitLog("price stream stale: polling", 10_000, (l) => String(l["target"]).includes("ETH/USD"));
  await client.frames.waitFor(isAlert("upstream_error", "firing", "ETH/USD"), {
    timeoutMs: 5_000,
    what: "upstream_error firing for ETH/USD",
  });
  const deadline = Date.now() + 10_000;
  while ((await sample(daemon.httpUrl, POLLS_OK)) < 2) {
    if (Date.now() > deadline) throw new Error("no fallback polls");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await removeFault(simulatorUrl, stall);
  await daemon.waitLog("price stream back: polls stop", 10_000, (l) =>
    String(l["target"]).includes("ETH/USD"),
  );
  await client.frames.waitFor(isAlert("upstream_error", "resolved", "ETH/USD"), {
    timeoutMs: 5_000,
    what: "upstream_error resolved for ETH/USD",
  });
  expect(count(isAlert("upstream_error", "firing", "BTC/USD"))).toBe(0);

  // 3. a disconnect: the connection reopens and prices flow again
  await postFault(simulatorUrl, { kind: "streamDisconnect" }, 300);
  await daemon.waitLog("price stream down", 5_000);
  await daemon.waitLog("price stream recovered", 10_000);
  const before = count(isPrice("BTC/USD"));
  await waitFrames("prices after the reconnect", isPrice("BTC/USD"), before + 5);
  expect(await sample(daemon.httpUrl, 'pragma_monitor_stream_connections{interval="100ms"}')).toBe(1);

  daemon.signal("SIGTERM");
  expect(await daemon.waitExit(10_000)).toEqual({ code: 0, signal: null });
}, 90_000);
