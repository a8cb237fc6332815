// Test helpers for the upstream client: an in-process HTTP server on 127.0.0.1:0 that records requests, and fixtures.
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Repository root (test/upstream/../..). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** Upstream bodies in the live server's formats, owned by the repository (see test/fixtures/README.md). */
export const FIXTURES_DIR = resolve(REPO_ROOT, "test/fixtures/upstream");

/** Read one fixture file as text. */
export function fixture(name: string): string {
  return readFileSync(resolve(FIXTURES_DIR, name), "utf8");
}

/** What the server saw of one request. */
export interface RecordedRequest {
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
}

/** Handler receiving the 1-based request number. */
export type TestHandler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

/** A running test server. */
export interface TestServer {
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Start a server on an ephemeral loopback port. */
export async function startServer(handler: TestHandler): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    requests.push({ url: req.url ?? "", headers: req.headers });
    handler(req, res, requests.length);
  });
  server.keepAliveTimeout = 200;
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** Reply with JSON text and a status. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(body);
}

/** A complete, valid bare vault body. */
export const VAULT_JSON = {
  id: "pragma-usdc-vault",
  name: "Pragma USDC Vault",
  description: "Delta-neutral USDC strategy",
  inception_date: "2024-11-01",
  chain: "starknet",
  chain_id: "SN_MAIN",
  symbol: "pUSDC",
  base_asset: "USDC",
  status: "live",
  tvl: "1523400.12",
  share_price: "1.0421",
  mgmt_fee_bps: 100,
  perf_fee_bps: 1000,
  strategy_brief: "Funding-rate carry",
  docs_url: "https://docs.example/vault",
  contract: { address: "0x0123", abi_version: "1" },
  deposit_constraints: { min_deposit: "10", max_deposit: "1000000", paused: false },
  withdraw_constraints: {
    instant_liquidity: true,
    instant_slippage_max_bps: 30,
    redeem_24h_threshold_pct_of_aum: 10,
    redeem_48h_above_threshold: true,
  },
  icons: { light: "https://x/l.svg", dark: "https://x/d.svg" },
  extra_field_ignored: 1,
};
