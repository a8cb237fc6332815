// The real daemon against a fake upstream on 127.0.0.1:0 that answers in the live server's shapes (not the
// simulator's): a vault with the live API's optional fields is watched, not reported as an upstream error; a
// publisher with a null timestamp and a null variation do not cost their snapshots; a 500 the server pins on
// the request is sent once per poll and still raises upstream_error.
import { afterEach, describe, expect, it } from "vitest";
import { fixture, sendJson, startServer, type TestServer } from "../upstream/helpers.js";
import { http, startTestApp, type TestApp } from "./harness.js";

let app: TestApp | undefined;
let upstream: TestServer | undefined;
afterEach(async () => {
  await app?.stop();
  await upstream?.close();
  app = undefined;
  upstream = undefined;
});

const MISSING_VIEW = JSON.stringify({
  resource: "EntryModel",
  message: 'Database error: relation "median_1w_aggregate" does not exist',
  happened_at: "2026-11-25T00:00:00.000000000Z",
});

/** Serve the live-shape fixtures by path; /data of ETH/USD fails the way a missing aggregate view does. */
async function startLiveUpstream(): Promise<TestServer> {
  return startServer((req, res) => {
    const path = (req.url ?? "").split("?")[0] ?? "";
    if (path === "/api/v1/vaults/pragma-btc-vault")
      return sendJson(res, 200, fixture("vault_live_envelope.json"));
    if (path === "/api/v1/vaults/pragma-eth-vault")
      return sendJson(res, 200, fixture("vault_live_minimal.json"));
    if (path === "/node/v1/onchain/publishers")
      return sendJson(res, 200, fixture("onchain_publishers_mainnet_spot_null_timestamp.json"));
    if (path === "/node/v1/onchain/BTC/USD")
      return sendJson(res, 200, fixture("onchain_btc_usd_mainnet_decimals0_null_variation.json"));
    if (path === "/node/v1/data/ETH/USD") return sendJson(res, 500, MISSING_VIEW);
    return sendJson(res, 404, fixture("404_entry_not_found.json"));
  });
}

/** The value of one Prometheus sample line (0 when absent). */
function sample(metrics: string, prefix: string): number {
  const line = metrics.split("\n").find((l) => l.startsWith(prefix));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("daemon against the live server's shapes", () => {
  it("watches live-shape vaults, publishers and on-chain entries without an upstream_error", async () => {
    upstream = await startLiveUpstream();
    app = await startTestApp({
      upstream: { url: upstream.url, vaultUrl: upstream.url },
      monitors: {
        spreadMs: 0,
        vaults: [
          { id: "pragma-btc-vault", periodMs: 200 },
          { id: "pragma-eth-vault", periodMs: 200 },
        ],
        publishers: [{ network: "starknet-mainnet", publisherType: "Spot", periodMs: 200 }],
        onchain: [{ pair: "BTC/USD", network: "starknet-mainnet", periodMs: 200 }],
      },
      rules: [{ kind: "upstream_error", threshold: 1 }, { kind: "vault_status" }],
    });
    const t = app;
    // A second: five polls of every target.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const metrics = (await http("GET", `${t.httpUrl}/metrics`)).text;
    for (const endpoint of ["vault", "publishers", "onchain"]) {
      expect(
        sample(metrics, `pragma_monitor_polls_total{endpoint="${endpoint}",outcome="ok"}`),
      ).toBeGreaterThanOrEqual(3);
      expect(sample(metrics, `pragma_monitor_polls_total{endpoint="${endpoint}",outcome="error"}`)).toBe(0);
    }
    expect(t.alertEvents().map((e) => e.alert.rule)).toEqual([]);
    expect((await http("GET", `${t.httpUrl}/readyz`)).status).toBe(200);
  });

  it("sends a 500 the server pins on the request once per poll, and raises upstream_error", async () => {
    upstream = await startLiveUpstream();
    app = await startTestApp({
      upstream: {
        url: upstream.url,
        vaultUrl: upstream.url,
        retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 20, maxElapsedMs: 1_000 },
      },
      monitors: { spreadMs: 0, maxBackoffMs: 200, offchain: [{ pair: "ETH/USD", periodMs: 200 }] },
      rules: [{ kind: "upstream_error", threshold: 2 }],
    });
    const fired = await app.waitForAlert(
      (e) => e.alert.rule === "upstream_error" && e.alert.status === "firing",
      5_000,
      "upstream_error firing",
    );
    expect(fired.alert.context).toMatchObject({ lastErrorCode: "PM_ERR_UPSTREAM_HTTP" });
    await new Promise((resolve) => setTimeout(resolve, 600));
    const metrics = (await http("GET", `${app.httpUrl}/metrics`)).text;
    const polls = sample(metrics, 'pragma_monitor_polls_total{endpoint="pair_price",outcome="error"}');
    const requests = upstream.requests.filter((r) => r.url.startsWith("/node/v1/data/ETH/USD")).length;
    expect(polls).toBeGreaterThanOrEqual(3);
    // One request per poll (one more may be in flight), not maxAttempts per poll.
    expect(requests).toBeGreaterThanOrEqual(polls);
    expect(requests).toBeLessThanOrEqual(polls + 1);
  });
});
