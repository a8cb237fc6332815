// Origin and Host rules against the real daemon: seeded browser-like and rebinding requests, each verdict checked.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { rawStatus } from "../integration/harness.js";
import { upgradeStatus } from "../sinks/ws/harness.js";
import { loadTestConfig, startRecordedApp, type RecordedApp } from "./support/app.js";
import { SEED, budget, seededRandom } from "./support/mode.js";
import { reportSuite } from "./support/report.js";

const ATTEMPTS = budget(600, 4_000);
const CONCURRENCY = 12;
const LISTED_ORIGIN = "https://dash.example.com";
const LISTED_HOST = "monitor.internal";

type HostCase = "127.0.0.1" | "localhost" | "[::1]" | "listed" | "rebind" | "lookalike";
type OriginCase = "none" | "own" | "listed" | "foreign" | "null" | "other-port";
interface Attempt {
  readonly kind: "upgrade" | "http";
  readonly host: HostCase;
  readonly origin: OriginCase;
  readonly path: string;
}

const HOSTS: readonly HostCase[] = ["127.0.0.1", "localhost", "[::1]", "listed", "rebind", "lookalike"];
const ORIGINS: readonly OriginCase[] = ["none", "own", "listed", "foreign", "null", "other-port"];
const PATHS = ["/healthz", "/readyz", "/metrics", "/nope"];

/** The rules of docs/websocket.md, restated independently of src/http/access.ts. */
function expectedAllowed(attempt: Attempt): boolean {
  const hostOk = attempt.host !== "rebind" && attempt.host !== "lookalike";
  if (!hostOk) return false;
  if (attempt.kind === "http") return true; // Origin applies to the upgrade (and future writes)
  return attempt.origin === "none" || attempt.origin === "own" || attempt.origin === "listed";
}

function headersFor(attempt: Attempt, port: number): Record<string, string> {
  const host = {
    "127.0.0.1": `127.0.0.1:${port}`,
    localhost: `localhost:${port}`,
    "[::1]": `[::1]:${port}`,
    listed: `${LISTED_HOST}:${port}`,
    rebind: `rebind.evil.example:${port}`,
    lookalike: `127.0.0.1.evil.example:${port}`,
  }[attempt.host];
  const origin = {
    none: undefined,
    own: `http://${host}`,
    listed: LISTED_ORIGIN,
    foreign: "http://evil.example",
    null: "null",
    "other-port": `http://127.0.0.1:${port + 1}`,
  }[attempt.origin];
  return { host, ...(origin === undefined ? {} : { origin }) };
}

/** HTTP status of the attempt (101 for an accepted upgrade). */
function send(attempt: Attempt, port: number): Promise<number> {
  const headers = headersFor(attempt, port);
  return attempt.kind === "upgrade"
    ? upgradeStatus(`ws://127.0.0.1:${port}/ws`, { headers })
    : rawStatus(port, "GET", attempt.path, headers);
}

describe("origin-host", () => {
  let run: RecordedApp;
  beforeAll(async () => {
    const config = loadTestConfig({
      upstream: { url: "simulator", simulator: { seed: SEED, scenario: "", speed: 1 } },
      monitors: {
        offchain: [{ pair: "BTC/USD", periodMs: 200 }],
        onchain: [],
        publishers: [],
        funding: [],
        vaults: [],
        warmup: { enabled: false },
      },
      rules: [],
      server: { port: 0, allowedOrigins: [LISTED_ORIGIN], allowedHosts: [LISTED_HOST] },
    });
    run = await startRecordedApp(config, seededRandom(SEED));
  });
  afterAll(async () => {
    await run?.stop();
  });

  it("answers every attempt as the rules say, counts every refusal, logs them once per burst", async () => {
    const startedAtMs = Date.now();
    const random = seededRandom(SEED + 15);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const attempts: Attempt[] = Array.from({ length: ATTEMPTS }, () => ({
      kind: random() < 0.6 ? "upgrade" : "http",
      host: pick(HOSTS),
      origin: pick(ORIGINS),
      path: pick(PATHS),
    }));
    // a subscriber without Origin keeps receiving prices throughout
    const good = new WebSocket(`ws://127.0.0.1:${run.port}/ws`);
    let ticks = 0;
    good.on("message", (data: Buffer) => {
      if (String(data).startsWith('{"type":"price"')) ticks += 1;
    });
    await new Promise((resolve) => good.once("open", resolve));
    good.send(JSON.stringify({ op: "subscribe", channels: ["prices"] }));
    const ticksAtStart = ticks;

    const counts = {
      accepted: { none: 0, own: 0, listed: 0 },
      refusedUpgrade: 0,
      refusedHttp: 0,
      allowedHttp: 0,
    };
    let wrong = 0;
    for (let i = 0; i < attempts.length; i += CONCURRENCY) {
      const batch = attempts.slice(i, i + CONCURRENCY);
      const statuses = await Promise.all(batch.map((attempt) => send(attempt, run.port)));
      batch.forEach((attempt, j) => {
        const status = statuses[j]!;
        const allowed = attempt.kind === "upgrade" ? status === 101 : status !== 403;
        if (allowed !== expectedAllowed(attempt) || (!allowed && status !== 403)) wrong += 1;
        if (attempt.kind === "http") {
          if (allowed) counts.allowedHttp += 1;
          else counts.refusedHttp += 1;
        } else if (!allowed) counts.refusedUpgrade += 1;
        else if (attempt.origin === "none" || attempt.origin === "own" || attempt.origin === "listed")
          counts.accepted[attempt.origin] += 1;
      });
    }
    const metric = async (name: "wsRejected" | "httpRejected", reason: string): Promise<number> =>
      (await run.app.metrics[name].get()).values.find((v) => v.labels["reason"] === reason)?.value ?? 0;
    const rejectedOrigin = await metric("wsRejected", "origin");
    const rejectedHost = await metric("wsRejected", "host");
    const rejectedHttp = await metric("httpRejected", "host");
    const durationMs = Date.now() - startedAtMs;
    const refusalLines = run.logs.filter((line) => String(line["msg"]).startsWith("refused ")).length;
    // one line at the start of each burst, then at most one per 10 s window, per kind (upgrade, HTTP)
    const logBound = 2 * (2 + Math.ceil(durationMs / 10_000));
    good.close();

    const report = reportSuite("origin-host", "Origin and Host rules against the real daemon", startedAtMs, {
      "requests sent (seeded mix)": attempts.length,
      "  upgrades accepted, no Origin (non-browser)": counts.accepted.none,
      "  upgrades accepted, the daemon's own origin": counts.accepted.own,
      "  upgrades accepted, origin in allowedOrigins": counts.accepted.listed,
      "  upgrades refused with 403": counts.refusedUpgrade,
      "  HTTP requests answered (Host allowed)": counts.allowedHttp,
      "  HTTP requests refused with 403 (Host)": counts.refusedHttp,
      "ws_rejected{reason=origin} (metric)": rejectedOrigin,
      "ws_rejected{reason=host} (metric)": rejectedHost,
      "http_rejected{reason=host} (metric)": rejectedHttp,
      [`refusal log lines (bound ${logBound})`]: refusalLines,
      "price ticks to a subscriber meanwhile": ticks - ticksAtStart,
      "wrong verdicts": wrong,
      lost: wrong,
    });
    expect(report.counts["wrong verdicts"]).toBe(0);
    expect(rejectedOrigin + rejectedHost).toBe(counts.refusedUpgrade);
    expect(rejectedHttp).toBe(counts.refusedHttp);
    expect(refusalLines).toBeGreaterThan(0);
    expect(refusalLines).toBeLessThanOrEqual(logBound);
    expect(ticks - ticksAtStart).toBeGreaterThan(0);
  });
});
