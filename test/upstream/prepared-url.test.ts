// A query object's URL is built and split once: every request of it goes where `new URL(base + path)` said it would.
import { afterEach, describe, expect, it } from "vitest";
import { candlestickPath } from "../../src/upstream/candlestick.js";
import { onchainPath } from "../../src/upstream/onchain.js";
import { pairPricePath } from "../../src/upstream/pair-price.js";
import { publishersPath } from "../../src/upstream/publishers.js";
import type { PragmaClient } from "../../src/upstream/types.js";
import { vaultPath } from "../../src/upstream/vault.js";
import { createHarness, type Harness } from "./harness.js";
import { fixture, sendJson, startServer, type TestServer } from "./helpers.js";

const ETH = fixture("data_eth_usd_default.json");
const open: { server?: TestServer; harness?: Harness } = {};
afterEach(async () => {
  await open.harness?.close();
  await open.server?.close();
  delete open.harness;
  delete open.server;
});

/** A server answering every request with `body`, and a client on `base` (the server's URL + `suffix`). */
async function serve(body: string, suffix = ""): Promise<{ server: TestServer; harness: Harness }> {
  const server = await startServer((_req, res) => sendJson(res, 200, body));
  const harness = createHarness(`${server.url}${suffix}`);
  Object.assign(open, { server, harness });
  return { server, harness };
}

/** A query that counts how often its fields are read (each build of its URL reads them). */
function counted<T extends object>(query: T): { query: T; reads: () => number } {
  let reads = 0;
  const proxy = new Proxy(query, {
    get(target, key, receiver) {
      reads += 1;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { query: proxy, reads: () => reads };
}

// [what, the query, the old builder of its path (base path prefix aside), the client's call of it]
const CASES: readonly [
  string,
  object,
  (query: never) => string,
  (client: PragmaClient, query: never) => Promise<unknown>,
][] = [
  [
    "pair price, every parameter",
    {
      pair: "eth/usd",
      entryType: "future",
      aggregation: "median",
      interval: "1s",
      routing: true,
      withComponents: true,
      expiry: "2026-12-25T08:00:00",
    },
    pairPricePath,
    (client, query) => client.getPairPrice(query),
  ],
  ["pair price, defaults", { pair: "BTC/USD" }, pairPricePath, (client, query) => client.getPairPrice(query)],
  [
    "candles",
    { pair: "BTC/USD", interval: "1min" },
    candlestickPath,
    (client, query) => client.getCandlesticks(query),
  ],
  [
    "on-chain entry",
    { pair: "BTC/USD", network: "starknet-sepolia", components: true, variations: true },
    onchainPath,
    (client, query) => client.getOnchainEntry(query),
  ],
  [
    "publishers",
    { network: "starknet-sepolia", publisherType: "Spot" },
    publishersPath,
    (client, query) => client.getOnchainPublishers(query),
  ],
];

describe("URLs built once per query", () => {
  it.each(CASES)("%s: the URL the old builder made, built on the first request only", async (...row) => {
    const [, fields, build, call] = row;
    const path = build(fields as never);
    // a base with a path prefix and a trailing slash, as a reverse proxy may need
    const { server, harness } = await serve(ETH, "/prefix/");
    const old = new URL(`${server.url}/prefix${path}`);
    const { query, reads } = counted(fields);
    await call(harness.client, query as never).catch(() => undefined);
    const readsOfFirst = reads();
    expect(readsOfFirst).toBeGreaterThan(0);
    await call(harness.client, query as never).catch(() => undefined);
    await call(harness.client, query as never).catch(() => undefined);
    expect(reads()).toBe(readsOfFirst);
    expect(server.requests.map((request) => request.url)).toEqual(Array(3).fill(old.pathname + old.search));
    // an equal query in another object is its own (the cache is by the object a target keeps)
    await call(harness.client, { ...fields } as never).catch(() => undefined);
    expect(server.requests.at(-1)?.url).toBe(old.pathname + old.search);
  });

  it("builds a vault URL per request, as before", async () => {
    const { server, harness } = await serve("{}");
    await harness.client.getVault("vault 1/ä").catch(() => undefined);
    const old = new URL(`${server.url}/vault${vaultPath("vault 1/ä")}`);
    expect(server.requests.map((request) => request.url)).toEqual([old.pathname + old.search]);
  });

  it("still rejects a query the live server refuses, on every request", async () => {
    const { server, harness } = await serve(ETH);
    const query = { pair: "BTC/USD", aggregation: "twap" as const, withComponents: true };
    for (let i = 0; i < 2; i++)
      await expect(harness.client.getPairPrice(query)).rejects.toMatchObject({
        code: "PM_ERR_INVALID_REQUEST",
      });
    expect(server.requests).toEqual([]);
  });
});
