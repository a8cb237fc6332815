// A counting HTTP proxy in front of the simulator: one per cluster member, so the test sees which member polled which pair,
// and when; it answers 500 for the pairs a test marks as failing.
import { createServer, type Server } from "node:http";

/** One request a member made: the pair it asked for (`BASE/QUOTE`) and when the proxy received it. */
export interface ProxiedRequest {
  readonly pair: string;
  readonly atMs: number;
}

/** A running proxy with its log of pair-price requests. */
export interface CountingProxy {
  readonly url: string;
  readonly requests: ProxiedRequest[];
  /** Pairs (`BASE/QUOTE`) whose price requests are answered 500 instead of forwarded. */
  readonly failing: Set<string>;
  close(): Promise<void>;
}

const PAIR_PRICE_PATH = /^\/node\/v1\/data\/([^/?]+)\/([^/?]+)/;

/** Forward every request to `targetUrl`, logging pair-price requests by pair; `rewrite` may change a pair price's body. */
export async function startCountingProxy(
  targetUrl: string,
  rewrite: (pair: string, body: Buffer) => Buffer = (_, body) => body,
): Promise<CountingProxy> {
  const requests: ProxiedRequest[] = [];
  const failing = new Set<string>();
  const server: Server = createServer((req, res) => {
    const path = req.url ?? "/";
    const match = PAIR_PRICE_PATH.exec(path);
    const pair =
      match === null ? null : `${decodeURIComponent(match[1] ?? "")}/${decodeURIComponent(match[2] ?? "")}`;
    if (pair !== null) requests.push({ pair, atMs: Date.now() });
    if (pair !== null && failing.has(pair)) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end('{"error":"failing on purpose (test)"}');
      return;
    }
    fetch(`${targetUrl}${path}`, { headers: { accept: "application/json" } })
      .then(async (upstream) => {
        const body = Buffer.from(await upstream.arrayBuffer());
        res.writeHead(upstream.status, {
          "content-type": upstream.headers.get("content-type") ?? "application/json",
        });
        res.end(pair === null || upstream.status !== 200 ? body : rewrite(pair, body));
      })
      .catch(() => {
        res.writeHead(502);
        res.end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failing,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
