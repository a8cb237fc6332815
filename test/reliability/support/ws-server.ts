// The real WebSocket server (hub, journal, HTTP server, ws server) on 127.0.0.1:0, and recording clients.
import { randomBytes } from "node:crypto";
import { connect as connectTcp, type Socket } from "node:net";
import WebSocket from "ws";
import type { ServerConfig } from "../../../src/config/types.js";
import { startHarness, type Harness } from "../../sinks/ws/harness.js";
import { Signal } from "./wait.js";

export const WS_PAIRS = ["BTC/USD", "ETH/USD", "SOL/USD"] as const;
export const WS_RULES = ["price_change", "stale_price", "upstream_error"] as const;

/** A running server with its hub (to publish) and metrics (to check): the WebSocket tests' harness. */
export type WsHarness = Harness;

/** Start the server with `config` (a full ServerConfig, as the daemon would build it). */
export function startWsHarness(config: ServerConfig): Promise<WsHarness> {
  return startHarness(config);
}

/** A server frame as parsed JSON. */
export type Frame = Readonly<Record<string, unknown>> & { readonly type: string };

/** A ws client that records every frame; tests wait on `changed`. */
export class RecordingClient {
  readonly frames: Frame[] = [];
  readonly changed = new Signal();
  closeCode: number | null = null;
  readonly closed: Promise<number>;
  readonly opened: Promise<void>;

  constructor(readonly socket: WebSocket) {
    socket.on("message", (data: Buffer, isBinary: boolean) => {
      this.frames.push(isBinary ? { type: "<binary>" } : (JSON.parse(data.toString("utf8")) as Frame));
      this.changed.notify();
    });
    socket.on("error", () => undefined);
    this.closed = new Promise((resolve) =>
      socket.once("close", (code: number) => {
        this.closeCode = code;
        resolve(code);
        this.changed.notify();
      }),
    );
    this.opened = new Promise((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("unexpected-response", () => reject(new Error("upgrade refused")));
      socket.once("error", reject);
    });
    this.opened.catch(() => undefined);
  }

  count(type: string): number {
    return this.frames.filter((frame) => frame.type === type).length;
  }

  send(message: unknown): void {
    this.socket.send(typeof message === "string" ? message : JSON.stringify(message));
  }
}

/** Connect and wait for `hello`. */
export async function connectClient(url: string, timeoutMs = 10_000): Promise<RecordingClient> {
  const client = new RecordingClient(new WebSocket(url, { perMessageDeflate: false }));
  await client.opened;
  await client.changed.until(() => client.count("hello") > 0, "hello", timeoutMs);
  return client;
}

/** A raw TCP socket that completed the WebSocket upgrade, for sending frames no library would produce. */
export async function rawUpgrade(port: number): Promise<{ socket: Socket; ended: Promise<void> }> {
  const socket = connectTcp(port, "127.0.0.1");
  socket.on("error", () => undefined);
  const ended = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let head = "";
    const onData = (chunk: Buffer): void => {
      head += chunk.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      socket.off("data", onData);
      if (head.startsWith("HTTP/1.1 101")) resolve();
      else reject(new Error(`upgrade refused: ${head.split("\r\n")[0]}`));
    };
    socket.on("data", onData);
    socket.once("connect", () =>
      socket.write(
        "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
          `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      ),
    );
  });
  socket.resume(); // discard whatever the server sends (hello, close frames)
  return { socket, ended };
}

/** Re-check `condition` every few ms until it holds (for server-side state that emits no event). */
export async function pollUntil(
  condition: () => boolean,
  what: string,
  timeoutMs: number,
  refresh: () => Promise<void> = () => Promise.resolve(),
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await refresh();
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await refresh();
  }
}
