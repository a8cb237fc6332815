// Integration tests of the WebSocket API: hello, filters, active alerts, snapshot, resume and gaps, bad input.
import { afterEach, describe, expect, it } from "vitest";
import {
  alert,
  connect,
  metricValue,
  publishTick,
  startHarness,
  tick,
  until,
  type Frame,
  type Harness,
} from "./harness.js";
import { heartbeatDue } from "../../../src/sinks/ws/session.js";

const isEvent = (frame: Frame): boolean => ["alert", "price", "lifecycle"].includes(frame.type);

describe("WebSocket API", () => {
  let harness: Harness;
  afterEach(async () => harness.close());

  it("says hello with the protocol, version, last seq and heartbeat", async () => {
    harness = await startHarness({ heartbeatMs: 12_345 });
    harness.hub.publishAlert(alert());
    const client = await connect(harness.url);
    expect(client.frames[0]).toEqual({
      type: "hello",
      protocol: 1,
      version: "9.9.9",
      seq: 1,
      heartbeatMs: 12_345,
    });
  });

  it("delivers only the channels, pairs, rules and severities subscribed to", async () => {
    harness = await startHarness();
    const client = await connect(harness.url);
    const reply = await client.request({
      op: "subscribe",
      id: "1",
      channels: ["alerts", "prices"],
      pairs: ["BTC/USD", "eth/usd"],
      rules: ["price_change"],
      minSeverity: "warning",
    });
    expect(reply).toMatchObject({
      type: "subscribed",
      id: "1",
      channels: ["alerts", "prices"],
      pairs: ["BTC/USD", "ETH/USD"],
      rules: ["price_change"],
      minSeverity: "warning",
      active: [],
    });
    const { hub } = harness;
    hub.publishAlert(alert({ pair: "SOL/USD", summary: "wrong pair" }));
    hub.publishAlert(alert({ rule: "stale_price", summary: "wrong rule" }));
    hub.publishAlert(alert({ severity: "info", summary: "too mild" }));
    hub.publishLifecycle("config_reloaded");
    publishTick(hub, tick("SOL/USD"));
    publishTick(hub, tick("ETH/USD", "2000"));
    hub.publishAlert(alert({ severity: "critical", summary: "wanted" }));
    await client.request({ op: "ping", id: "sync" });
    const events = client.frames.filter(isEvent);
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ type: "price", tick: { pair: "ETH/USD", price: "2000" } });
    expect(events[1]).toMatchObject({ type: "alert", seq: 5, alert: { summary: "wanted" } });
  });

  it("builds no price tick while no client subscribes to prices, and one per price for any number that do", async () => {
    harness = await startHarness();
    const { hub } = harness;
    let built = 0;
    const publish = (pair: string): void =>
      hub.publishPrice(`offchain:${pair}`, () => {
        built += 1;
        return tick(pair);
      });
    const alertsOnly = await Promise.all([1, 2, 3].map(() => connect(harness!.url)));
    for (const client of alertsOnly) await client.request({ op: "subscribe", id: "a", channels: ["alerts"] });
    publish("BTC/USD");
    expect(built).toBe(0);
    const watchers = [await connect(harness.url), await connect(harness.url)];
    for (const client of watchers)
      await client.request({ op: "subscribe", id: "p", channels: ["prices"], pairs: ["ETH/USD"] });
    publish("ETH/USD");
    publish("SOL/USD"); // built and remembered, though no client watches SOL/USD
    expect(built).toBe(2);
    for (const client of watchers)
      expect(await client.next(isEvent)).toMatchObject({ type: "price", tick: { pair: "ETH/USD" } });
    await watchers[0]!.request({ op: "unsubscribe", id: "u", channels: ["prices"] });
    watchers[1]!.close();
    await watchers[1]!.closed;
    await until(() => harness!.ws.clientCount() === 4);
    publish("ETH/USD");
    expect(built).toBe(2);
    // a snapshot still shows every target's latest price: the BTC/USD one is built when asked for
    const snapshot = await alertsOnly[0]!.request({ op: "snapshot", id: "s" });
    expect(snapshot["prices"]).toEqual([tick("BTC/USD"), tick("ETH/USD"), tick("SOL/USD")]);
    expect(built).toBe(4);
  });

  it("adds channels on a repeated subscribe and removes them on unsubscribe", async () => {
    harness = await startHarness();
    const client = await connect(harness.url);
    await client.request({ op: "subscribe", id: "a", channels: ["alerts"], pairs: ["BTC/USD", "ETH/USD"] });
    const second = await client.request({ op: "subscribe", id: "b", channels: ["lifecycle"] });
    expect(second).toMatchObject({ channels: ["alerts", "lifecycle"], pairs: ["BTC/USD", "ETH/USD"] });
    const removed = await client.request({
      op: "unsubscribe",
      id: "c",
      channels: ["alerts"],
      pairs: ["ETH/USD"],
    });
    expect(removed).toEqual({
      type: "unsubscribed",
      id: "c",
      seq: 0,
      channels: ["lifecycle"],
      pairs: ["BTC/USD"],
      rules: [],
      minSeverity: "info",
    });
    harness.hub.publishAlert(alert());
    harness.hub.publishLifecycle("config_reloaded");
    const event = await client.next(isEvent);
    expect(event).toMatchObject({ type: "lifecycle", event: "config_reloaded", seq: 2 });
    const refused = await client.request({ op: "unsubscribe", id: "d", rules: ["price_change"] });
    expect(refused).toMatchObject({ type: "error", code: "bad_request" });
  });

  it("lists the firing alerts matching the filter on subscribe, and answers snapshots", async () => {
    harness = await startHarness();
    const { hub } = harness;
    const btc = alert({ pair: "BTC/USD", fingerprint: "btc" });
    hub.publishAlert(btc);
    hub.publishAlert(alert({ pair: "ETH/USD", fingerprint: "eth" }));
    hub.publishAlert(alert({ pair: "SOL/USD", fingerprint: "sol" }));
    hub.publishAlert(alert({ pair: "SOL/USD", fingerprint: "sol", status: "resolved" }));
    publishTick(hub, tick("BTC/USD"));
    publishTick(hub, tick("ETH/USD"));
    const client = await connect(harness.url);
    const all = await client.request({ op: "snapshot", id: 3 });
    expect(all).toMatchObject({ type: "snapshot", id: 3, seq: 4 });
    expect((all["active"] as { fingerprint: string }[]).map((a) => a.fingerprint)).toEqual(["btc", "eth"]);
    expect(all["prices"]).toHaveLength(2);
    const reply = await client.request({
      op: "subscribe",
      id: "s",
      channels: ["alerts"],
      pairs: ["BTC/USD"],
    });
    expect(reply["active"]).toEqual([btc]);
    const narrowed = await client.request({ op: "snapshot", id: "n" });
    expect(narrowed["prices"]).toEqual([tick("BTC/USD")]);
  });

  it("tells the current seq on pong, so a client with a sparse filter can advance its resume point", async () => {
    harness = await startHarness();
    const client = await connect(harness.url);
    await client.request({ op: "subscribe", id: "1", channels: ["alerts"], pairs: ["SOL/USD"] });
    for (let i = 0; i < 5; i++) harness.hub.publishAlert(alert({ pair: "BTC/USD" }));
    expect(await client.request({ op: "ping", id: "p" })).toEqual({ type: "pong", id: "p", seq: 5 });
  });

  it("sends a heartbeat with the current seq to clients that were sent nothing or are behind", async () => {
    harness = await startHarness({ heartbeatMs: 60 });
    const quiet = await connect(harness.url);
    const sparse = await connect(harness.url);
    const busy = await connect(harness.url);
    await quiet.request({ op: "subscribe", id: "1", channels: ["lifecycle"] });
    await sparse.request({ op: "subscribe", id: "1", channels: ["alerts"], pairs: ["SOL/USD"] });
    await busy.request({ op: "subscribe", id: "1", channels: ["alerts"] });
    // the quiet client gets a heartbeat although the journal did not move
    expect(await quiet.next((frame) => frame.type === "heartbeat")).toEqual({ type: "heartbeat", seq: 0 });
    harness.hub.publishAlert(alert({ pair: "SOL/USD" }));
    harness.hub.publishAlert(alert({ pair: "BTC/USD" }));
    // the sparse client was sent seq 1 in this period but is behind (seq 2 did not match): it learns seq 2
    expect(await sparse.next((frame) => frame.type === "heartbeat" && frame["seq"] === 2)).toBeDefined();
    expect(await busy.next((frame) => frame.type === "heartbeat" && frame["seq"] === 2)).toBeDefined();
    expect(await metricValue(harness.metrics.wsMessagesOut, { type: "heartbeat" })).toBeGreaterThanOrEqual(3);
  });

  it("resumes across a forced disconnect with no gap and no duplicate", async () => {
    harness = await startHarness();
    const { hub } = harness;
    const first = await connect(harness.url);
    await first.request({ op: "subscribe", id: "1", channels: ["alerts", "lifecycle"] });
    hub.publishAlert(alert({ summary: "one" }));
    hub.publishAlert(alert({ summary: "two" }));
    const lastSeen = (await first.next((frame) => frame.type === "alert" && frame["seq"] === 2))["seq"];
    first.socket.terminate();
    await first.closed;
    hub.publishAlert(alert({ summary: "three" }));
    hub.publishLifecycle("config_reloaded");
    hub.publishAlert(alert({ pair: "ETH/USD", summary: "four" }));

    const second = await connect(harness.url);
    const reply = await second.request({
      op: "subscribe",
      id: "2",
      channels: ["alerts", "lifecycle"],
      since: lastSeen,
    });
    expect(reply).toMatchObject({ type: "subscribed", seq: 5 });
    hub.publishAlert(alert({ summary: "five" }));
    await second.next((frame) => frame["seq"] === 6);
    const seqs = second.frames.filter(isEvent).map((frame) => frame["seq"]);
    expect(seqs).toEqual([3, 4, 5, 6]);
    expect(second.frames.some((frame) => frame.type === "gap")).toBe(false);
  });

  it("replays only events matching the filter", async () => {
    harness = await startHarness();
    harness.hub.publishAlert(alert({ pair: "ETH/USD" }));
    harness.hub.publishAlert(alert({ pair: "BTC/USD" }));
    harness.hub.publishLifecycle("config_reloaded");
    const client = await connect(harness.url);
    await client.request({ op: "subscribe", id: "1", channels: ["alerts"], pairs: ["BTC/USD"], since: 0 });
    await client.request({ op: "ping", id: "sync" });
    expect(client.frames.filter(isEvent).map((frame) => frame["seq"])).toEqual([2]);
  });

  it("announces a gap when since is older than the journal holds", async () => {
    harness = await startHarness({ journalSize: 3 });
    for (let i = 0; i < 6; i++) harness.hub.publishAlert(alert());
    const client = await connect(harness.url);
    await client.request({ op: "subscribe", id: "1", channels: ["alerts"], since: 1 });
    const gap = await client.next((frame) => frame.type === "gap");
    expect(gap).toEqual({ type: "gap", from: 2, to: 3 });
    await client.next((frame) => frame["seq"] === 6);
    expect(client.frames.filter(isEvent).map((frame) => frame["seq"])).toEqual([4, 5, 6]);
    const gapIndex = client.frames.indexOf(gap);
    expect(client.frames.findIndex(isEvent)).toBeGreaterThan(gapIndex);
  });

  const badInputs: [string, string | Record<string, unknown>, string, RegExp][] = [
    ["invalid JSON", "{not json", "bad_request", /JSON/],
    ["a non-object", "[1,2]", "bad_request", /object/],
    ["an unknown op", { op: "frobnicate", id: "x" }, "unknown_op", /frobnicate/],
    ["a missing op", { id: "x" }, "bad_request", /op/],
    [
      "channels of the wrong type",
      { op: "subscribe", id: "x", channels: "alerts" },
      "bad_request",
      /channels/,
    ],
    ["an unknown channel", { op: "subscribe", id: "x", channels: ["news"] }, "bad_request", /news/],
    ["an unknown pair", { op: "subscribe", id: "x", pairs: ["DOGE/EUR"] }, "bad_request", /DOGE\/EUR/],
    ["an unknown rule", { op: "subscribe", id: "x", rules: ["moon"] }, "bad_request", /moon/],
    ["a bad minSeverity", { op: "subscribe", id: "x", minSeverity: "fatal" }, "bad_request", /minSeverity/],
    ["a negative since", { op: "subscribe", id: "x", since: -1 }, "bad_request", /since/],
    ["a fractional since", { op: "subscribe", id: "x", since: 1.5 }, "bad_request", /since/],
    ["a since ahead of the journal", { op: "subscribe", id: "x", since: 99 }, "bad_request", /ahead/],
    ["an unknown field", { op: "ping", id: "x", extra: 1 }, "bad_request", /extra/],
    ["an object id", { op: "ping", id: {} }, "bad_request", /id/],
  ];
  it.each(badInputs)(
    "answers %s with an error frame and keeps the connection open",
    async (_name, input, code, message) => {
      harness = await startHarness();
      const client = await connect(harness.url);
      client.send(input);
      const error = await client.next((frame) => frame.type === "error");
      expect(error["code"]).toBe(code);
      expect(error["message"]).toMatch(message);
      if (typeof input !== "string" && typeof input["id"] === "string") expect(error["id"]).toBe(input["id"]);
      expect(await client.request({ op: "ping", id: "still-open" })).toEqual({
        type: "pong",
        id: "still-open",
        seq: 0,
      });
    },
  );

  it("answers binary frames with an error frame", async () => {
    harness = await startHarness();
    const client = await connect(harness.url);
    client.socket.send(Buffer.from([1, 2, 3]), { binary: true });
    expect(await client.next((frame) => frame.type === "error")).toMatchObject({
      code: "bad_request",
      id: null,
    });
    expect(await client.request({ op: "ping", id: "p" })).toEqual({ type: "pong", id: "p", seq: 0 });
  });
});

describe("heartbeatDue", () => {
  it.each([
    ["sent nothing in the period, up to date", false, 7, 7, true],
    ["sent nothing in the period, behind", false, 3, 7, true],
    ["sent frames, behind the journal", true, 3, 7, true],
    ["sent frames, up to date", true, 7, 7, false],
  ])("%s", (_name, sentInPeriod, toldSeq, lastSeq, due) => {
    expect(heartbeatDue({ sentInPeriod, toldSeq }, lastSeq)).toBe(due);
  });
});
