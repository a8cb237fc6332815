// A WebSocket test client for the daemon's /ws API: every server frame goes into a feed, close code kept.
import WebSocket from "ws";
import type { AlertEvent, LifecycleEvent, PriceEvent } from "../../src/domain/events.js";
import { createFeed, type Feed } from "./feed.js";

/** The server frames these tests look at (DESIGN §4); anything else is kept as `other`. */
export type ServerFrame =
  | AlertEvent
  | LifecycleEvent
  | PriceEvent
  | { readonly type: "hello"; readonly seq: number }
  | { readonly type: "subscribed"; readonly id: string; readonly seq: number }
  | { readonly type: "error"; readonly id?: string; readonly code: string; readonly message: string }
  | { readonly type: "other"; readonly raw: string };

/** A connected client. */
export interface WsClient {
  readonly frames: Feed<ServerFrame>;
  /** Resolves with the close code once the connection is closed (by either side). */
  readonly closed: Promise<number>;
  /** Send `subscribe` and wait for its `subscribed` reply. */
  subscribe(request: Readonly<Record<string, unknown>>, timeoutMs?: number): Promise<void>;
  close(): void;
}

const KNOWN = new Set(["alert", "lifecycle", "price", "hello", "subscribed", "error"]);

function parseFrame(raw: string): ServerFrame {
  const value: unknown = JSON.parse(raw);
  const type = typeof value === "object" && value !== null ? (value as { type?: unknown }).type : undefined;
  return typeof type === "string" && KNOWN.has(type) ? (value as ServerFrame) : { type: "other", raw };
}

/** A text frame's payload (ws hands out a Buffer, fragments or an ArrayBuffer). */
function textOf(data: WebSocket.RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.isBuffer(data) ? data.toString("utf8") : Buffer.from(new Uint8Array(data)).toString("utf8");
}

const open = new Set<WebSocket>();
let nextId = 0;

/** Connect to `url` and wait for the `hello` frame. */
export async function connectWs(url: string, timeoutMs = 5_000): Promise<WsClient> {
  const socket = new WebSocket(url);
  open.add(socket);
  const frames = createFeed<ServerFrame>();
  socket.on("message", (data: WebSocket.RawData) => frames.push(parseFrame(textOf(data))));
  const closed = new Promise<number>((resolve) =>
    socket.once("close", (code: number) => {
      open.delete(socket);
      frames.end(`WebSocket closed with ${code}`);
      resolve(code);
    }),
  );
  socket.on("error", () => undefined); // surfaced as a close
  await frames.waitFor((frame) => frame.type === "hello", { timeoutMs, what: `hello from ${url}` });
  return {
    frames,
    closed,
    async subscribe(request, waitMs = 5_000) {
      const id = `sub-${++nextId}`;
      socket.send(JSON.stringify({ op: "subscribe", id, ...request }));
      const reply = await frames.waitFor(
        (frame) => (frame.type === "subscribed" || frame.type === "error") && frame.id === id,
        { timeoutMs: waitMs, what: `reply to subscribe ${id}` },
      );
      if (reply.type === "error") throw new Error(`subscribe refused: ${reply.code} ${reply.message}`);
    },
    close: () => socket.close(),
  };
}

/** Terminate every client a test left open (afterEach). */
export function closeAllWs(): void {
  for (const socket of open) socket.terminate();
  open.clear();
}

/** Alert frames of one fingerprint and status. */
export function alertFrames(
  frames: readonly ServerFrame[],
  fingerprint: string,
  status: string,
): AlertEvent[] {
  return frames.filter(
    (frame): frame is AlertEvent =>
      frame.type === "alert" && frame.alert.fingerprint === fingerprint && frame.alert.status === status,
  );
}
