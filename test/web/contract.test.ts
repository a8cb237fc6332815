// The page declares its own wire types (it ships alone, importing nothing from src/): this holds them to the
// daemon's. Type-level checks run in `npm run typecheck`; the round trips run here.
import { describe, expect, expectTypeOf, it } from "vitest";
import type {
  AlertEvent,
  AlertPayload,
  BusEvent,
  LifecycleEvent,
  PriceTick,
} from "../../src/domain/events.js";
import type { Silence as DomainSilence, SilenceState } from "../../src/domain/silence.js";
import type { ServerFrame as DaemonFrame } from "../../src/sinks/ws/frames.js";
import { parseClientMessage } from "../../src/sinks/ws/protocol.js";
import { decodeFrame } from "../../web/src/decode.js";
import { CHANNELS, INITIAL_ID, RESUME_ID, SNAPSHOT_ID } from "../../web/src/resume.js";
import { REFRESH_ID } from "../../web/src/session.js";
import type * as Web from "../../web/src/types.js";

describe("the page's wire types", () => {
  it("accept everything the daemon sends", () => {
    expectTypeOf<AlertPayload>().toExtend<Web.AlertPayload>();
    expectTypeOf<PriceTick>().toExtend<Web.PriceTick>();
    expectTypeOf<LifecycleEvent>().toExtend<Web.LifecycleEvent>();
    // the page never unsubscribes, so never gets `unsubscribed`
    expectTypeOf<Exclude<DaemonFrame, { type: "unsubscribed" }> | BusEvent>().toExtend<Web.ServerFrame>();
    expectTypeOf<
      DomainSilence & { readonly status: { readonly state: SilenceState } }
    >().toExtend<Web.Silence>();
  });

  it("send what the daemon's silence takes", () => {
    expectTypeOf<Web.NewSilence>().toExtend<
      Pick<DomainSilence, "matchers" | "startsAt" | "endsAt" | "createdBy" | "comment">
    >();
  });

  it.each<Web.ClientMessage>([
    { op: "snapshot", id: SNAPSHOT_ID },
    { op: "snapshot", id: REFRESH_ID },
    { op: "subscribe", id: INITIAL_ID, channels: CHANNELS, since: 0 },
    { op: "subscribe", id: RESUME_ID, channels: CHANNELS, since: 1042 },
    { op: "ping", id: "p" },
  ])("the daemon's parser accepts %j", (message) => {
    const parsed = parseClientMessage(JSON.stringify(message), { pairs: new Set(), rules: new Set() });
    expect(parsed).toMatchObject({ ok: true, message: { op: message.op, id: message.id } });
  });

  it("decodes the daemon's events as they are serialised", () => {
    const event: AlertEvent = {
      type: "alert",
      seq: 7,
      alert: {
        fingerprint: "9f2c41d0a7b3e6f1",
        status: "firing",
        rule: "price_change",
        severity: "critical",
        labels: { pair: "BTC/USD" },
        summary: "BTC/USD moved +5.02% in 1min (threshold 2%)",
        value: 0.0502,
        threshold: 0.02,
        startsAt: "2026-11-22T10:00:03.120Z",
        endsAt: null,
        reason: "first",
        context: { price: "86184.12", observedAt: "2026-11-22T10:00:03.000Z" },
        silencedBy: ["s1"],
      },
    };
    const lifecycle: LifecycleEvent = {
      type: "lifecycle",
      seq: 8,
      event: "silence_created",
      at: "2026-11-22T10:00:04.000Z",
      version: "0.1.0",
      detail: { id: "s1" },
    };
    const frames: DaemonFrame[] = [
      { type: "hello", protocol: 1, version: "0.1.0", seq: 8, heartbeatMs: 30_000 },
      { type: "snapshot", id: "3", seq: 8, active: [event.alert], prices: [] },
      { type: "heartbeat", seq: 8 },
      { type: "gap", from: 1, to: 4 },
      { type: "error", id: null, code: "bad_request", message: "no" },
    ];
    for (const frame of [event, lifecycle, ...frames])
      expect(decodeFrame(JSON.stringify(frame))).toEqual(frame);
  });
});
