// Per-client state of the WebSocket server: filter, resume position, rate limiter, liveness and guarded sends.
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import WebSocket from "ws";
import type { Metrics } from "../../metrics.js";
import type { SubscriptionFilter } from "./filter.js";
import { encodeFrame, type ServerFrame } from "./frames.js";
import { createRateLimiter, type RateLimiter } from "./rate-limit.js";
import { initialDelivery, type DeliveryState } from "./resume.js";

/** Close codes the server uses (RFC 6455 §7.4.1). */
export const CLOSE_GOING_AWAY = 1001;
export const CLOSE_POLICY_VIOLATION = 1008;
export const CLOSE_TRY_AGAIN_LATER = 1013;

export interface Session {
  readonly id: number;
  readonly socket: WebSocket;
  /** The upgraded connection under `socket`: complete frames (frames.ts) are written to it directly. */
  readonly stream: Duplex;
  readonly logger: Logger;
  readonly limiter: RateLimiter;
  /** The live filter (that of `delivery`). */
  readonly filter: SubscriptionFilter;
  /** The live filter and the record of what this connection was sent, replaced by the resume planner. */
  delivery: DeliveryState;
  /** Highest seq this connection was told of (events, hello, subscribed, snapshot, pong, heartbeat). */
  toldSeq: number;
  /** Whether any frame was sent since the last heartbeat tick. */
  sentInPeriod: boolean;
  /** Whether the record-limit warning was logged for this connection (once is enough). */
  warnedForgotten: boolean;
  /** Whether a pong arrived since the last heartbeat ping. */
  alive: boolean;
  /** Send a complete frame (frames.ts); false when not sent (closing, or closed now as a slow consumer). */
  send(data: Buffer): boolean;
  /** Encode, send and count one reply frame. */
  reply(frame: ServerFrame): void;
  /** Whether the server has started closing this connection (further input is ignored). */
  readonly closing: boolean;
  /** Close with a code and reason once (later calls are ignored). */
  close(code: number, reason: string): void;
}

/**
 * Whether a heartbeat frame is due at a tick: the client was sent nothing in the period (it learns the
 * link is alive), or it was not told the journal's last seq (its filter skipped the newer events).
 */
export function heartbeatDue(session: Pick<Session, "sentInPeriod" | "toldSeq">, lastSeq: number): boolean {
  return !session.sentInPeriod || session.toldSeq < lastSeq;
}

/** Create the state of one accepted connection; sends beyond `maxBufferedBytes` close it with 1013. */
export function createSession(options: {
  readonly id: number;
  readonly socket: WebSocket;
  /** The connection `socket` was upgraded on (the server never negotiates an extension, so frames go out as built). */
  readonly stream: Duplex;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly maxBufferedBytes: number;
  readonly messagesPerSecond: number;
  readonly startMs: number;
  /** The journal's last seq at connect time (the `hello` seq). */
  readonly lastSeq: number;
  /** Called after each change of the live filter, with the one it replaced (the server's session index). */
  readonly onFilterChange?: (session: Session, previous: SubscriptionFilter) => void;
}): Session {
  const { socket, stream, metrics, maxBufferedBytes } = options;
  let closing = false;
  let delivery = initialDelivery(options.lastSeq);

  const session: Session = {
    id: options.id,
    socket,
    stream,
    logger: options.logger,
    limiter: createRateLimiter(options.messagesPerSecond, options.startMs),
    get filter() {
      return delivery.filter;
    },
    get delivery() {
      return delivery;
    },
    set delivery(next) {
      const previous = delivery.filter;
      delivery = next;
      if (next.filter !== previous) options.onFilterChange?.(session, previous);
    },
    toldSeq: 0,
    sentInPeriod: false,
    warnedForgotten: false,
    alive: true,
    send(data) {
      if (closing || socket.readyState !== WebSocket.OPEN) return false;
      if (socket.bufferedAmount + data.length > maxBufferedBytes) {
        // never queue beyond the limit: drop this frame and let the client resume with `since`
        metrics.wsSlowConsumers.inc();
        metrics.droppedEvents.inc({ component: "ws", reason: "slow_consumer" });
        session.logger.warn(
          { bufferedBytes: socket.bufferedAmount, maxBufferedBytes },
          "closing slow WebSocket consumer",
        );
        session.close(CLOSE_TRY_AGAIN_LATER, "slow consumer");
        return false;
      }
      // a whole frame in one write: `ws` writes its own frames (pings, close) whole too, so they never interleave
      stream.write(data);
      session.sentInPeriod = true;
      return true;
    },
    reply(frame) {
      if (!session.send(encodeFrame(frame))) return;
      metrics.wsMessagesOut.inc({ type: frame.type });
      if ("seq" in frame) session.toldSeq = Math.max(session.toldSeq, frame.seq);
    },
    get closing() {
      return closing;
    },
    close(code, reason) {
      if (closing) return;
      closing = true;
      if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING)
        socket.close(code, reason);
    },
  };
  return session;
}
