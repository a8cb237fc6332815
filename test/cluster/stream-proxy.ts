// A proxy in front of the simulator that pipes (not buffers) the multi-pair price stream and records, per stream
// connection, which pairs it asked for and while it was open; pair-price polls are recorded too.
import { createServer, request, type Server } from "node:http";

/** One stream connection of a member: the pairs in its query, and when it opened and closed (null: still open). */
export interface StreamConnection {
  readonly pairs: readonly string[];
  readonly openedAtMs: number;
  closedAtMs: number | null;
}

/** A running proxy with its logs. */
export interface StreamProxy {
  readonly url: string;
  readonly streams: StreamConnection[];
  /** Pair-price polls (`BASE/QUOTE`) with the time they arrived. */
  readonly polls: { readonly pair: string; readonly atMs: number }[];
  close(): Promise<void>;
}

const STREAM_PATH = "/node/v1/data/multi/stream";
const PAIR_PRICE_PATH = /^\/node\/v1\/data\/([^/?]+)\/([^/?]+)/;

/** Forward every request to `targetUrl` (responses piped as they come), logging streams and polls. */
export async function startStreamProxy(targetUrl: string): Promise<StreamProxy> {
  const target = new URL(targetUrl);
  const streams: StreamConnection[] = [];
  const polls: { pair: string; atMs: number }[] = [];
  const server: Server = createServer((req, res) => {
    const path = req.url ?? "/";
    const url = new URL(path, "http://proxy");
    if (url.pathname === STREAM_PATH) {
      const connection: StreamConnection = {
        pairs: url.searchParams.getAll("pairs[]"),
        openedAtMs: Date.now(),
        closedAtMs: null,
      };
      streams.push(connection);
      res.on("close", () => (connection.closedAtMs = Date.now()));
    } else {
      const match = PAIR_PRICE_PATH.exec(url.pathname);
      if (match !== null && match[1] !== "multi")
        polls.push({
          pair: `${decodeURIComponent(match[1] ?? "")}/${decodeURIComponent(match[2] ?? "")}`,
          atMs: Date.now(),
        });
    }
    const upstream = request(
      { host: target.hostname, port: target.port, path, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    streams,
    polls,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
