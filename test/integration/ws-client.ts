// A WebSocket test client for the daemon's /ws API: records every frame and awaits the next one matching a predicate.
import WebSocket from "ws";
import type { AlertPayload, PriceTick } from "../../src/domain/events.js";

/** A parsed server frame (shapes of docs/websocket.md). */
export type Frame =
  | {
      readonly type: "hello";
      readonly protocol: number;
      readonly version: string;
      readonly seq: number;
      readonly heartbeatMs: number;
    }
  | {
      readonly type: "subscribed";
      readonly id: string | number | null;
      readonly seq: number;
      readonly channels: readonly string[];
      readonly pairs: readonly string[];
      readonly rules: readonly string[];
      readonly active: readonly AlertPayload[];
    }
  | { readonly type: "alert"; readonly seq: number; readonly alert: AlertPayload }
  | { readonly type: "price"; readonly tick: PriceTick }
  | { readonly type: "lifecycle"; readonly seq: number; readonly event: string }
  | { readonly type: "gap"; readonly from: number; readonly to: number }
  | {
      readonly type: "error";
      readonly id: string | number | null;
      readonly code: string;
      readonly message: string;
    }
  | { readonly type: "pong" | "snapshot" | "unsubscribed"; readonly id: string | number | null };

/** One connection; `frames` holds everything received, `next` consumes them in order. */
export class WsClient {
  readonly frames: Frame[] = [];
  private cursor = 0;
  private waiters: (() => void)[] = [];
  private closed = false;
  /** Resolves once the connection is closed, by either side. */
  readonly closedPromise: Promise<void>;

  private constructor(private readonly socket: WebSocket) {
    socket.on("message", (data: Buffer) => {
      this.frames.push(JSON.parse(data.toString("utf8")) as Frame);
      this.wake();
    });
    this.closedPromise = new Promise((resolve) =>
      socket.on("close", () => {
        this.closed = true;
        this.wake();
        resolve();
      }),
    );
    socket.on("error", () => undefined);
  }

  /** Connect and wait for the hello frame. */
  static async connect(url: string): Promise<{ readonly client: WsClient; readonly hello: Frame }> {
    const socket = new WebSocket(url);
    const client = new WsClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    const hello = await client.next((frame) => frame.type === "hello", 2_000);
    return { client, hello };
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** The next unread frame matching `predicate` (frames skipped on the way stay in `frames`). */
  async next(predicate: (frame: Frame) => boolean, timeoutMs: number): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while (this.cursor < this.frames.length) {
        const frame = this.frames[this.cursor++]!;
        if (predicate(frame)) return frame;
      }
      if (this.closed) throw new Error("socket closed while waiting for a frame");
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0)
        throw new Error(`timed out after ${timeoutMs} ms; ${this.frames.length} frames received`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remainingMs);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Send a request and await the reply that echoes its id. */
  async request(
    message: { readonly id: string } & Record<string, unknown>,
    timeoutMs = 2_000,
  ): Promise<Frame> {
    this.socket.send(JSON.stringify(message));
    return this.next((frame) => "id" in frame && frame.id === message.id, timeoutMs);
  }

  /** Every alert frame received so far. */
  alerts(): Extract<Frame, { type: "alert" }>[] {
    return this.frames.filter((frame): frame is Extract<Frame, { type: "alert" }> => frame.type === "alert");
  }

  /** Drop the TCP connection without a closing handshake (a crash or a cut network). */
  terminate(): void {
    this.socket.terminate();
  }

  close(): void {
    if (!this.closed) this.socket.close();
  }
}
