// Child process of the polling benches: the baselines, polling N pairs every second as a bare undici loop (on the daemon's grid or in one burst) or a naive fetch script.
import { Agent, request } from "undici";
import { exitWithParent } from "./lib/child.js";
import { daemonPairPriceUrls } from "./lib/urls.js";

/** What the child answers to "count": requests completed and failed so far. */
export interface PollerCount {
  readonly requests: number;
  readonly errors: number;
}

/** The baselines: "grid" (bare undici on the daemon's 100 ms grid), "burst" (bare undici, all at once), "fetch" (naive). */
export const BASELINES = ["grid", "burst", "fetch"] as const;

/** The daemon's coalescing grid: coalesceMs 100 (capped at a tenth of the period). */
export const GRID_MS = 100;

const [mode = "grid", url = "", pairCount = "500", periodText = "1000"] = process.argv.slice(2);
const PERIOD_MS = Number(periodText);
let requests = 0;
let errors = 0;
const stops: (() => unknown)[] = [];
exitWithParent(async () => {
  for (const stop of stops) await Promise.resolve(stop()).catch(() => undefined);
});
process.on("message", (message) => {
  if (message === "count") process.send?.({ requests, errors } satisfies PollerCount);
});

/**
 * A bare undici loop: one keep-alive pool (the daemon's connections and keep-alive), GET, body.json(); every
 * `tickMs` one timer fires the URLs of that tick's slot that are not still in flight (as the daemon's polls
 * never overlap). grid: slot i % (period / 100 ms), one wake-up per 100 ms; burst: one slot, all at once.
 */
function bareLoop(urls: readonly string[], tickMs: number): void {
  const dispatcher = new Agent({ connections: 16, keepAliveTimeout: 4_000, keepAliveMaxTimeout: 60_000 });
  const slots = Math.max(1, Math.round(PERIOD_MS / tickMs));
  const inFlight = new Uint8Array(urls.length);
  const poll = async (i: number): Promise<void> => {
    inFlight[i] = 1;
    try {
      const response = await request(urls[i]!, { dispatcher });
      await response.body.json();
      if (response.statusCode === 200) requests++;
      else errors++;
    } catch {
      errors++;
    }
    inFlight[i] = 0;
  };
  let timer: NodeJS.Timeout | undefined;
  const tick = (): void => {
    const nowMs = Date.now();
    const slot = Math.round(nowMs / tickMs) % slots;
    for (let i = slot; i < urls.length; i += slots) if (inFlight[i] === 0) void poll(i);
    // next grid point of wall-clock time, as the daemon's coalescing clock rounds due times to multiples of the grid
    timer = setTimeout(tick, (Math.floor(nowMs / tickMs) + 1) * tickMs - nowMs);
  };
  tick();
  stops.push(
    () => clearTimeout(timer),
    () => dispatcher.close(),
  );
}

/** The naive script: one setInterval per URL, global fetch, res.json(). */
function naiveFetch(urls: readonly string[]): void {
  for (const target of urls) {
    const timer = setInterval(() => {
      fetch(target)
        .then((res) => res.json())
        .then(() => requests++)
        .catch(() => errors++);
    }, PERIOD_MS);
    stops.push(() => clearInterval(timer));
  }
}

const urls = [...daemonPairPriceUrls(url, Number(pairCount), PERIOD_MS).values()];
if (mode === "grid") bareLoop(urls, GRID_MS);
else if (mode === "burst") bareLoop(urls, PERIOD_MS);
else naiveFetch(urls);
process.send?.({ started: urls.length });
