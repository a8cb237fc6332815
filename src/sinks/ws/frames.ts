// Server → client frames of protocol v1 and their encoding; each bus event is serialised once and reused.
import type { AlertPayload, BusEvent, PriceTick } from "../../domain/events.js";
import type { FilterView } from "./filter.js";
import type { ErrorCode, RequestId } from "./protocol.js";

export type ServerFrame =
  | {
      readonly type: "hello";
      readonly protocol: number;
      readonly version: string;
      readonly seq: number;
      readonly heartbeatMs: number;
    }
  | ({ readonly type: "subscribed"; readonly id: RequestId; readonly seq: number } & FilterView & {
        readonly active: readonly AlertPayload[];
      })
  | ({ readonly type: "unsubscribed"; readonly id: RequestId; readonly seq: number } & FilterView)
  | {
      readonly type: "snapshot";
      readonly id: RequestId;
      readonly seq: number;
      readonly active: readonly AlertPayload[];
      readonly prices: readonly PriceTick[];
    }
  | { readonly type: "pong"; readonly id: RequestId; readonly seq: number }
  /** Sent every `heartbeatMs` to a client that was sent nothing, or is behind the journal: its resume point. */
  | { readonly type: "heartbeat"; readonly seq: number }
  | { readonly type: "gap"; readonly from: number; readonly to: number }
  | { readonly type: "error"; readonly id: RequestId; readonly code: ErrorCode; readonly message: string };

/**
 * A complete WebSocket text frame (RFC 6455 §5.2: FIN, opcode 1, unmasked as a server sends, no extension) of
 * `text`, header and UTF-8 payload in one buffer: the bytes `ws` would write for `send(text)`, built once so a
 * fan-out writes the same buffer to every socket without `ws` framing it again per client.
 */
export function textFrame(text: string): Buffer {
  const payloadBytes = Buffer.byteLength(text, "utf8");
  const headerBytes = payloadBytes < 126 ? 2 : payloadBytes < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerBytes + payloadBytes);
  frame[0] = 0x81;
  if (headerBytes === 2) frame[1] = payloadBytes;
  else if (headerBytes === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(payloadBytes, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(payloadBytes), 2);
  }
  frame.write(text, headerBytes, "utf8");
  return frame;
}

/** Encode a reply frame as a complete WebSocket frame (one client, so no caching). */
export function encodeFrame(frame: ServerFrame): Buffer {
  return textFrame(JSON.stringify(frame));
}

/**
 * An encoder that serialises and frames each event object once: live fan-out and every replay of the same
 * journaled event share one complete WebSocket frame (`textFrame`). The WeakMap lets entries go with the event (the journal is the bound).
 */
export function createEventEncoder(): (event: BusEvent) => Buffer {
  const cache = new WeakMap<BusEvent, Buffer>();
  return (event) => {
    let encoded = cache.get(event);
    if (encoded === undefined) {
      // the bus event shapes are the wire shapes of DESIGN §4, so they serialise as they are
      encoded = textFrame(JSON.stringify(event));
      cache.set(event, encoded);
    }
    return encoded;
  };
}
