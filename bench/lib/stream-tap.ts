// A loopback reverse proxy in front of the simulator that timestamps each price-stream event as it passes to the daemon.
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createParser } from "eventsource-parser";
import { hexPrice, wallMs } from "./steps.js";

/** A pair's price as one stream event carried it, and when the proxy passed that event on. */
export interface TappedPrice {
  readonly price: number;
  readonly atMs: number;
}

/** The running tap: its URL (the daemon's upstream), each pair's prices as they passed, and close. */
export interface StreamTap {
  readonly url: string;
  /** Prices of `pair` seen in the stream so far, oldest first. */
  prices(pair: string): readonly TappedPrice[];
  close(): Promise<void>;
}

const STREAM_PATH = "/node/v1/data/multi/stream";

/**
 * Proxy every request to `upstreamUrl`; for the price stream, parse each event (eventsource-parser) and record
 * every pair's price with the time just before the chunk that completes the event is written to the daemon.
 */
export async function startStreamTap(upstreamUrl: string): Promise<StreamTap> {
  const upstream = new URL(upstreamUrl);
  const seen = new Map<string, TappedPrice[]>();
  const record = (data: string, atMs: number): void => {
    if (!data.startsWith("[")) return;
    for (const item of JSON.parse(data) as { pair_id?: unknown; price?: unknown }[]) {
      if (typeof item.pair_id !== "string" || typeof item.price !== "string") continue;
      let list = seen.get(item.pair_id);
      if (list === undefined) seen.set(item.pair_id, (list = []));
      list.push({ price: hexPrice(item.price), atMs });
    }
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        if (!(req.url ?? "").startsWith(STREAM_PATH)) return void up.pipe(res);
        let chunkAtMs = 0;
        // unnamed events carry the prices (the named `historical` one comes first, in another shape)
        const parser = createParser({
          onEvent: (event) => void (event.event === undefined && record(event.data, chunkAtMs)),
        });
        up.setEncoding("utf8").on("data", (chunk: string) => {
          chunkAtMs = wallMs();
          parser.feed(chunk);
          res.write(chunk);
        });
        up.on("end", () => res.end());
      },
    );
    forward.on("error", () => res.destroy());
    res.on("close", () => forward.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    prices: (pair) => seen.get(pair) ?? [],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
