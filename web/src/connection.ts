// The page's WebSocket: connect, hand each decoded frame on, reconnect with backoff and jitter after a close.
import { decodeFrame } from "./decode.js";
import type { ClientMessage, ServerFrame } from "./types.js";

/** What the owner of the connection is told. */
export interface ConnectionHandlers {
  /** The URL to open (read at every attempt: the token may have changed). */
  readonly url: () => string;
  readonly onOpen: () => void;
  readonly onFrame: (frame: ServerFrame) => void;
  /** The socket closed; `opened` false when it never opened (refused upgrade, daemon down). */
  readonly onClose: (info: { readonly opened: boolean; readonly code: number }) => void;
}

/** A live connection: send a message, start over at once, or stop for good. */
export interface Connection {
  send(message: ClientMessage): boolean;
  /** Close this socket and open a new one now (after a gap: a new connection has been sent nothing). */
  restart(): void;
  /** Reconnect now rather than after the backoff (a token was entered). */
  retryNow(): void;
  stop(): void;
}

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 15_000;

/** The wait before reconnect attempt `attempt` (0-based): doubling from 0.5 s to 15 s, with ±25 % jitter. */
export function reconnectDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(attempt, 10));
  return Math.round(base * (0.75 + random() * 0.5));
}

/** Open the WebSocket and keep it open. */
export function openConnection(handlers: ConnectionHandlers): Connection {
  let socket: WebSocket | null = null;
  let attempt = 0;
  let timer: number | undefined;
  let stopped = false;

  const connect = (): void => {
    timer = undefined;
    if (stopped) return;
    let opened = false;
    const ws = new WebSocket(handlers.url());
    socket = ws;
    ws.addEventListener("open", () => {
      opened = true;
      attempt = 0;
      handlers.onOpen();
    });
    ws.addEventListener("message", (event: MessageEvent<unknown>) => {
      if (socket !== ws || typeof event.data !== "string") return;
      const frame = decodeFrame(event.data);
      if (frame !== null) handlers.onFrame(frame);
    });
    ws.addEventListener("close", (event) => {
      if (socket !== ws) return;
      socket = null;
      handlers.onClose({ opened, code: event.code });
      if (!stopped) timer = window.setTimeout(connect, reconnectDelayMs(attempt++));
    });
  };

  const dropSocket = (): void => {
    const old = socket;
    socket = null;
    // a socket dropped on purpose reports nothing more (its close handler sees it is no longer current)
    old?.close(1000, "restart");
  };

  connect();
  return {
    send: (message) => {
      if (socket === null || socket.readyState !== WebSocket.OPEN) return false;
      socket.send(JSON.stringify(message));
      return true;
    },
    restart: () => {
      dropSocket();
      window.clearTimeout(timer);
      connect();
    },
    retryNow: () => {
      if (socket !== null) return;
      window.clearTimeout(timer);
      attempt = 0;
      connect();
    },
    stop: () => {
      stopped = true;
      window.clearTimeout(timer);
      dropSocket();
    },
  };
}
