// A windowed rule right after start, with candle warm-up on: judged against polled prices near the window's start, never a stale candle.
import { afterEach, expect, it } from "vitest";
import { http, startTestApp, type TestApp } from "./harness.js";
import { waitFor } from "../wait-for.js";

const PAIR = "STRK/USD";
const WINDOW_MS = 3_000;
/** windowToleranceMs for a 3 s window: the 2 s floor. */
const TOLERANCE_MS = 2_000;

let current: TestApp | undefined;
afterEach(async () => {
  await current?.stop();
  current = undefined;
});

it("a spike right after start is measured against a price near now − window (polled, or a candle close within the tolerance), never a stale warm-up candle", async () => {
  const t = (current = await startTestApp({
    monitors: {
      offchain: [{ pair: PAIR, periodMs: 100 }],
      // 1 min candles: their closes are up to a minute older than now − 3 s
      warmup: { enabled: true, interval: "1min", lookbackMs: 600_000 },
    },
    rules: [
      { kind: "price_change", windowMs: WINDOW_MS, threshold: 0.03 },
      // a window 1min closes can start (tolerance 60 s), so the target is warmed; it keeps the 3 s window's
      // tolerance at the 2 s floor (points 0.6 s apart) and never fires here
      { kind: "price_change", id: "price_change_10min", windowMs: 600_000, threshold: 0.5 },
    ],
  }));
  await t.waitForEvent(
    (e) => e.type === "price" && e.tick.pair === PAIR && Date.parse(e.tick.observedAt) >= t.startedAtMs + 500,
    5_000,
    "half a second of polled prices",
  );
  await t.injectFault({ kind: "spike", pair: PAIR, factor: 1.05 });
  const fired = await t.waitForAlert((e) => e.alert.status === "firing", 10_000, "price_change firing");
  const observedAtMs = Date.parse(String(fired.alert.context["observedAt"]));
  const previousAtMs = Date.parse(String(fired.alert.context["previousAt"]));
  // the reference lies within the tolerance of now − window (a candle would be up to 60 s before it)
  expect(observedAtMs - WINDOW_MS - previousAtMs).toBeLessThanOrEqual(TOLERANCE_MS);
  // a reference from before the start is a candle close, which is fair only when it falls within that tolerance (a
  // start in the first seconds of a minute puts the minute's close there): on the minute, and checked just above
  if (previousAtMs < t.startedAtMs - 1_000) expect(previousAtMs % 60_000).toBe(0);
  const spanS = Math.round(Number(fired.alert.context["spanMs"]) / 1_000);
  expect(fired.alert.summary).toMatch(
    spanS === 3
      ? /^STRK\/USD moved \+\d+\.\d\d% in 3s \(threshold 3%\)$/
      : new RegExp(`in ${spanS}s \\(window 3s, threshold 3%\\)$`),
  );
  // the target was warmed: candle closes were in the history the 3 s window had to look past
  await waitFor(
    async () =>
      expect((await http("GET", `${t.httpUrl}/metrics`)).text).toMatch(
        /pragma_monitor_upstream_requests_total\{endpoint="candlestick",status="200"\} [1-9]/,
      ),
    { timeout: 5_000, interval: 100 },
  );
});
