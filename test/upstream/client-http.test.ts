// The client over real loopback sockets: retries, Retry-After, timeouts, resets, aborts and error bodies.
import { afterEach, describe, expect, it } from "vitest";
import { isPmError, type PmError } from "../../src/domain/errors.js";
import { createHarness, type Harness } from "./harness.js";
import { fixture, sendJson, startServer, type TestHandler, type TestServer } from "./helpers.js";

const ETH = fixture("data_eth_usd_default.json");
let server: TestServer | undefined;
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  await server?.close();
  harness = undefined;
  server = undefined;
});

/** Start a server with `handler` and a harnessed client against it. */
async function setup(handler: TestHandler, overrides: Parameters<typeof createHarness>[1] = {}) {
  server = await startServer(handler);
  harness = createHarness(server.url, overrides);
  return { server, harness };
}

/** The PmError a promise rejects with. */
async function rejection(promise: Promise<unknown>): Promise<PmError> {
  try {
    await promise;
  } catch (error) {
    if (isPmError(error)) return error;
    throw error;
  }
  throw new Error("resolved without error");
}

describe("client over HTTP", () => {
  it("retries a 500 and returns the 200 that follows", async () => {
    const { server, harness } = await setup((_req, res, n) =>
      n === 1
        ? sendJson(
            res,
            500,
            '{"resource":"EntryModel","message":"Database error: connection pool timed out","happened_at":"t"}',
          )
        : sendJson(res, 200, ETH),
    );
    const price = await harness.client.getPairPrice({ pair: "ETH/USD" });
    expect(price.pairId).toBe("ETH/USD");
    expect(server.requests).toHaveLength(2);
    expect(harness.sleepsMs).toEqual([50]); // full jitter: 0.5 × min(1000, 100 × 2^0)
    expect(harness.samples.map((s) => [s.endpoint, s.status, s.errorCode])).toEqual([
      ["pair_price", 500, "PM_ERR_UPSTREAM_HTTP"],
      ["pair_price", 200, null],
    ]);
  });

  it("gives up after maxAttempts with a retryable HTTP error carrying the parsed body", async () => {
    const { server, harness } = await setup((_req, res) => sendJson(res, 503, "upstream overloaded"));
    const error = await rejection(harness.client.getPairPrice({ pair: "ETH/USD" }));
    expect(error.code).toBe("PM_ERR_UPSTREAM_HTTP");
    expect(error.retryable).toBe(true);
    expect(error.details).toMatchObject({
      endpoint: "pair_price",
      status: 503,
      body: { kind: "text", text: "upstream overloaded" },
    });
    expect(server.requests).toHaveLength(3);
    expect(harness.sleepsMs).toEqual([50, 100]);
  });

  it.each([
    ["a missing aggregate view", 'Database error: relation "twap_1w_candle" does not exist'],
    ["twap on /onchain", 'Database error: relation "twap_onchain_aggregate" does not exist'],
    ["a bad symbol", "Internal server error"],
  ])(
    "does not retry a 500 the server pins on the request (%s): one request per call, not retryable",
    async (_what, message) => {
      const body = JSON.stringify({ resource: "EntryModel", message, happened_at: "2026-11-25T00:00:00Z" });
      const { server, harness } = await setup((_req, res) => sendJson(res, 500, body));
      for (let call = 1; call <= 3; call++) {
        const error = await rejection(
          harness.client.getOnchainEntry({ pair: "BTC/USD", network: "starknet-mainnet" }),
        );
        expect(error).toMatchObject({ code: "PM_ERR_UPSTREAM_HTTP", retryable: false });
        expect(error.details).toMatchObject({ status: 500, body: { kind: "entry", message } });
        expect(server.requests).toHaveLength(call);
      }
      expect(harness.sleepsMs).toEqual([]);
    },
  );

  it("retries a 500 without the server's own error body (a proxy or a crash)", async () => {
    const { server, harness } = await setup((_req, res, n) =>
      n === 1 ? sendJson(res, 500, "<html>Internal Server Error</html>") : sendJson(res, 200, ETH),
    );
    await harness.client.getPairPrice({ pair: "ETH/USD" });
    expect(server.requests).toHaveLength(2);
  });

  it("honours Retry-After seconds on 429, beyond maxDelayMs but within the budget", async () => {
    const { server, harness } = await setup((_req, res, n) =>
      n === 1 ? sendJson(res, 429, "", { "retry-after": "3" }) : sendJson(res, 200, ETH),
    );
    await harness.client.getPairPrice({ pair: "ETH/USD" });
    expect(server.requests).toHaveLength(2);
    expect(harness.sleepsMs).toEqual([3_000]);
  });

  it("does not wait past maxElapsedMs: a Retry-After beyond the budget fails at once with retryAfterMs", async () => {
    const { server, harness } = await setup((_req, res) => sendJson(res, 429, "", { "retry-after": "60" }));
    const error = await rejection(harness.client.getVault("v1"));
    expect(error).toMatchObject({ code: "PM_ERR_UPSTREAM_HTTP", retryable: true });
    expect(error.details).toMatchObject({
      endpoint: "vault",
      status: 429,
      retryAfterMs: 60_000,
      body: { kind: "empty" },
    });
    expect(server.requests).toHaveLength(1);
    expect(harness.sleepsMs).toEqual([]);
  });

  it("does not retry a 404 and parses the entry error body", async () => {
    const { server, harness } = await setup((_req, res) =>
      sendJson(res, 404, fixture("404_entry_not_found.json")),
    );
    const error = await rejection(harness.client.getCandlesticks({ pair: "BTC/USD" }));
    expect(error.retryable).toBe(false);
    expect(error.details).toMatchObject({
      status: 404,
      body: { kind: "entry", message: "Entry not found: BTC/USD" },
    });
    expect(error.message).toBe("candlestick: HTTP 404: Entry not found: BTC/USD");
    expect(server.requests).toHaveLength(1);
  });

  it("parses the spec's signature error body and a vault error envelope", async () => {
    const { harness } = await setup((req, res) =>
      req.url?.startsWith("/vault")
        ? sendJson(res, 404, '{"status":"error","msg":"unknown vault"}')
        : sendJson(res, 400, '{"InvalidSignature":{"ConversionError":"FailedSerialization"}}'),
    );
    const signature = await rejection(harness.client.getPairPrice({ pair: "BTC/USD" }));
    expect(signature.details.body).toEqual({ kind: "signature", conversionError: "FailedSerialization" });
    const vault = await rejection(harness.client.getVault("nope"));
    expect(vault.details.body).toEqual({ kind: "vault", message: "unknown vault" });
  });

  it("retries a connection reset (socket destroyed) and succeeds", async () => {
    const { server, harness } = await setup((req, res, n) =>
      n === 1 ? req.socket.destroy() : sendJson(res, 200, ETH),
    );
    await harness.client.getPairPrice({ pair: "ETH/USD" });
    expect(server.requests).toHaveLength(2);
    expect(harness.samples[0]).toMatchObject({ status: null, errorCode: "PM_ERR_UPSTREAM_NETWORK" });
  });

  it("reports a persistent reset as a retryable network error", async () => {
    const { server, harness } = await setup((req) => req.socket.destroy());
    const error = await rejection(
      harness.client.getOnchainEntry({ pair: "BTC/USD", network: "starknet-mainnet" }),
    );
    expect(error).toMatchObject({ code: "PM_ERR_UPSTREAM_NETWORK", retryable: true });
    expect(server.requests).toHaveLength(3);
  });

  it("times out when no response comes, per attempt, then retries", async () => {
    const { server, harness } = await setup(
      (_req, res, n) => {
        if (n === 2) sendJson(res, 200, ETH); // first request hangs forever
      },
      { timeoutMs: 100 },
    );
    await harness.client.getPairPrice({ pair: "ETH/USD" });
    expect(server.requests).toHaveLength(2);
    expect(harness.samples[0]).toMatchObject({ status: null, errorCode: "PM_ERR_UPSTREAM_TIMEOUT" });
  });

  it("times out mid-body when the body never completes", async () => {
    const { harness } = await setup(
      (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.write(ETH.slice(0, 20)); // headers and half a body, then silence
      },
      { timeoutMs: 100, retry: { maxAttempts: 1, baseDelayMs: 10, maxDelayMs: 10, maxElapsedMs: 1_000 } },
    );
    const error = await rejection(harness.client.getPairPrice({ pair: "ETH/USD" }));
    expect(error).toMatchObject({ code: "PM_ERR_UPSTREAM_TIMEOUT", retryable: true });
    expect(harness.samples).toEqual([
      expect.objectContaining({ status: 200, errorCode: "PM_ERR_UPSTREAM_TIMEOUT" }),
    ]);
  });

  it("stops at once on abort during a request, without retrying", async () => {
    const controller = new AbortController();
    const { server, harness } = await setup(() => controller.abort()); // abort once the server has the request
    const error = await rejection(
      harness.client.getPairPrice({ pair: "ETH/USD" }, { signal: controller.signal }),
    );
    expect(error).toMatchObject({ code: "PM_ERR_ABORTED", retryable: false });
    expect(server.requests).toHaveLength(1);
    expect(harness.sleepsMs).toEqual([]);
  });

  it("stops on abort during the backoff sleep", async () => {
    const controller = new AbortController();
    const { server, harness } = await setup((_req, res) => sendJson(res, 500, ""), {
      sleep: (_ms, signal) => {
        controller.abort();
        return Promise.reject(signal?.reason as Error);
      },
    });
    const error = await rejection(
      harness.client.getPairPrice({ pair: "ETH/USD" }, { signal: controller.signal }),
    );
    expect(error.code).toBe("PM_ERR_ABORTED");
    expect(server.requests).toHaveLength(1);
  });

  it("sends nothing when the signal is already aborted", async () => {
    const { server, harness } = await setup((_req, res) => sendJson(res, 200, ETH));
    const error = await rejection(
      harness.client.getPairPrice({ pair: "ETH/USD" }, { signal: AbortSignal.abort() }),
    );
    expect(error.code).toBe("PM_ERR_ABORTED");
    expect(server.requests).toHaveLength(0);
  });

  it("does not retry a malformed 200 body: decode error, one attempt", async () => {
    const { server, harness } = await setup((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html><body>maintenance</body></html>");
    });
    const error = await rejection(harness.client.getPairPrice({ pair: "ETH/USD" }));
    expect(error).toMatchObject({ code: "PM_ERR_UPSTREAM_DECODE", retryable: false });
    expect(error.details.field).toBe("body");
    expect(server.requests).toHaveLength(1);
    expect(harness.samples[0]).toMatchObject({ status: 200, errorCode: "PM_ERR_UPSTREAM_DECODE" });
  });

  it("refuses a body larger than maxBodyBytes", async () => {
    const { harness } = await setup((_req, res) => sendJson(res, 200, ETH), { maxBodyBytes: 32 });
    const error = await rejection(harness.client.getPairPrice({ pair: "ETH/USD" }));
    expect(error.code).toBe("PM_ERR_UPSTREAM_DECODE");
  });

  it("walks every funding page until has_next_page is false", async () => {
    const page = (n: number, next: boolean) =>
      JSON.stringify({
        data: [{ pair: "BTC/USD", source: "HYPERLIQUID", timestamp_ms: 1_000 * n, hourly_rate: n / 1e6 }],
        page: n,
        page_size: 1,
        has_next_page: next,
      });
    const { server, harness } = await setup((req, res) => {
      const n = Number(new URL(req.url ?? "", "http://x").searchParams.get("page"));
      sendJson(res, 200, page(n, n < 3));
    });
    const rates = [];
    for await (const rate of harness.client.iterateFundingRates({
      pair: "BTC/USD",
      source: "HYPERLIQUID",
      pageSize: 1,
    })) {
      rates.push(rate.timestampMs);
    }
    expect(rates).toEqual([1_000, 2_000, 3_000]);
    expect(server.requests.map((r) => new URL(r.url, "http://x").searchParams.get("page"))).toEqual([
      "1",
      "2",
      "3",
    ]);
  });

  it("bounds funding pagination when the server never says stop", async () => {
    const body = fixture("funding_rates_history_btc_usd_hyperliquid_hour.json").replace(
      '"has_next_page": false',
      '"has_next_page": true',
    );
    const { server, harness } = await setup((_req, res) => sendJson(res, 200, body), { maxFundingPages: 3 });
    const error = await rejection(
      (async () => {
        for await (const _rate of harness.client.iterateFundingRates({
          pair: "BTC/USD",
          source: "HYPERLIQUID",
        })) {
          // drain
        }
      })(),
    );
    expect(error).toMatchObject({ code: "PM_ERR_UPSTREAM_DECODE", details: { field: "has_next_page" } });
    expect(server.requests).toHaveLength(3);
  });
});
