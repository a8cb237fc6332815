// Open SSE connections of the simulator's price stream: one timer per connection, keep-alives, stream faults.
import type { ServerResponse } from "node:http";
import type { FaultBook } from "./faults.js";
import type { Market } from "./market.js";
import { historicalEvent, streamPrices, type StreamPlan } from "./stream-routes.js";

/** The live server's keep-alive comment, sent every 30 s by default. */
export const KEEP_ALIVE_COMMENT = ": keep-alive-text\n\n";
export const DEFAULT_STREAM_KEEP_ALIVE_MS = 30_000;
/** A client that lets this much stream output pile up unread is cut off instead of buffered. */
const MAX_UNREAD_BYTES = 4 * 1024 * 1024;

/** The stream connections of one simulator. */
export interface StreamSessions {
  /** Answer a validated stream request on `res` (headers, historical event, then an event per interval). */
  open(res: ServerResponse, plan: StreamPlan): void;
  /** Open stream connections. */
  readonly size: number;
}

/** Stream sessions over a market and its fault book; `keepAliveMs` spaces the keep-alive comments. */
export function createStreamSessions(
  market: Market,
  book: FaultBook,
  keepAliveMs: number = DEFAULT_STREAM_KEEP_ALIVE_MS,
): StreamSessions {
  const open = new Set<ServerResponse>();
  return {
    get size() {
      return open.size;
    },
    open(res, plan) {
      if (res.destroyed) return; // the client left during the simulated latency
      if (book.stream(market.clock.nowMs()).disconnect) {
        res.destroy();
        return;
      }
      res.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        connection: "keep-alive",
      });
      if (plan.errorEvent !== null) {
        res.end(`event: error\ndata: ${JSON.stringify({ error: plan.errorEvent })}\n\n`);
        return;
      }
      open.add(res);
      const atMs = market.nowMs();
      res.write(`event: historical\ndata: ${JSON.stringify(historicalEvent(market, plan, atMs))}\n\n`);
      const tick = setInterval(() => sendPrices(market, book, plan, res), plan.intervalMs);
      const keepAlive = setInterval(() => send(res, KEEP_ALIVE_COMMENT), keepAliveMs);
      res.on("close", () => {
        clearInterval(tick);
        clearInterval(keepAlive);
        open.delete(res);
      });
    },
  };
}

/** One interval's event, with the stream faults in force: cut, stalled (all or some pairs), or malformed. */
function sendPrices(market: Market, book: FaultBook, plan: StreamPlan, res: ServerResponse): void {
  const effects = book.stream(market.clock.nowMs());
  if (effects.disconnect) {
    res.destroy();
    return;
  }
  if (effects.stallAll) return;
  const prices = streamPrices(market, plan, market.nowMs(), effects.stalledPairs);
  if (prices.length === 0) return;
  const data = JSON.stringify(prices);
  send(res, `data: ${effects.malformed ? `${data.slice(0, Math.ceil(data.length / 2))},,}{` : data}\n\n`);
}

/** Write stream output, or cut a client that stopped reading (its unread output is bounded). */
function send(res: ServerResponse, text: string): void {
  if (res.writableLength > MAX_UNREAD_BYTES) {
    res.destroy();
    return;
  }
  res.write(text);
}
