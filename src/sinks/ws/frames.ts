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

/** Encode a reply frame (one client, so no caching). */
export function encodeFrame(frame: ServerFrame): Buffer {
  return Buffer.from(JSON.stringify(frame), "utf8");
}

/**
 * An encoder that serialises each event object once: live fan-out and every replay of the same journaled
 * event share one Buffer. The WeakMap lets entries go with the event (the journal is the bound).
 */
export function createEventEncoder(): (event: BusEvent) => Buffer {
  const cache = new WeakMap<BusEvent, Buffer>();
  return (event) => {
    let encoded = cache.get(event);
    if (encoded === undefined) {
      // the bus event shapes are the wire shapes of DESIGN §4, so they serialise as they are
      encoded = Buffer.from(JSON.stringify(event), "utf8");
      cache.set(event, encoded);
    }
    return encoded;
  };
}
