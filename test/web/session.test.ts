// The status page's stream handling, replayed as whole sessions: first load, history, live events, reconnects with
// `since` (no gap, no duplicate), gaps, a wiped journal, refresh snapshots after silences change.
import { describe, expect, it } from "vitest";
import { CHANNELS, HISTORY_EVENTS } from "../../web/src/resume.js";
import {
  closeSession,
  FRESH_SESSION,
  REFRESH_ID,
  reloadSession,
  stepFrame,
  type Session,
} from "../../web/src/session.js";
import { applyRead } from "../../web/src/store.js";
import type { ClientMessage, ServerFrame } from "../../web/src/types.js";
import { alert, alertEvent, lifecycle, resolveEvent, target, tick } from "./frames.js";

/** Feed frames in order; collect what the page would send and read, and whether it had to start over. */
function run(session: Session, frames: readonly ServerFrame[]) {
  const messages: ClientMessage[] = [];
  const reads: string[] = [];
  let reloads = 0;
  let current = session;
  for (const frame of frames) {
    const step = stepFrame(current, frame, Date.parse("2026-11-22T10:00:01.000Z"));
    current = step.session;
    messages.push(...step.messages);
    reads.push(...step.reads);
    if (step.reload) reloads += 1;
  }
  return { session: current, messages, reads, reloads };
}

const hello = (seq: number): ServerFrame => ({ type: "hello", protocol: 1, version: "0.1.0", seq });
const subscribed = (id: string, seq: number, active = [alert()]): ServerFrame => ({
  type: "subscribed",
  id,
  seq,
  active,
});
const seqsOf = (session: Session): number[] => session.page.timeline.map((event) => event.seq);

const other = alert({ fingerprint: "fp-eth", labels: { pair: "ETH/USD", market: "offchain" } });

/** A page loaded at seq 12 with history 1..12 replayed: A (fp-btc) and B (fp-eth) firing. */
function loaded() {
  return run(FRESH_SESSION, [
    hello(10),
    {
      type: "snapshot",
      id: "snapshot",
      seq: 10,
      active: [alert()],
      prices: [tick("2026-11-22T10:00:00.000Z", "86000")],
    },
    // `active` carries the value as of now, newer than the event that announced it (seq 3)
    subscribed("initial", 12, [alert({ value: 0.09 }), other]),
    alertEvent(3, alert()),
    lifecycle(5, "silence_created"),
    resolveEvent(7, other),
    alertEvent(11, other),
    { type: "heartbeat", seq: 12 },
  ]);
}

describe("first load", () => {
  it("asks for a snapshot, then subscribes to every channel replaying the last events for the history", () => {
    const first = run(FRESH_SESSION, [hello(500)]);
    expect(first.messages).toEqual([{ op: "snapshot", id: "snapshot" }]);
    const second = run(first.session, [
      { type: "snapshot", id: "snapshot", seq: 500, active: [], prices: [] },
    ]);
    expect(second.messages).toEqual([
      { op: "subscribe", id: "initial", channels: CHANNELS, since: 500 - HISTORY_EVENTS },
    ]);
  });

  it("never asks for a since below 0 on a young journal", () => {
    const { messages } = run(FRESH_SESSION, [
      hello(3),
      { type: "snapshot", id: "snapshot", seq: 3, active: [], prices: [] },
    ]);
    expect(messages.at(-1)).toMatchObject({ since: 0 });
  });

  it("takes the firing alerts from the subscribe reply and reads the API once, after subscribing", () => {
    const { session, reads } = loaded();
    expect([...session.page.alerts.keys()].sort()).toEqual(["fp-btc", "fp-eth"]);
    // the replayed silence_created (seq 5) is history: the reads after the reply see its result already
    expect(reads).toEqual(["targets", "status", "silences"]);
    expect(session.page.connection).toBe("live");
  });

  it("puts replayed events in the timeline only: the reply's firing alerts are newer than them", () => {
    const { session } = loaded();
    expect(seqsOf(session)).toEqual([11, 7, 5, 3]);
    expect(session.page.alerts.has("fp-eth")).toBe(true);
    expect(session.page.alerts.get("fp-btc")?.value).toBe(0.09);
  });

  it("applies live events after the reply to the firing alerts, and re-reads the targets they concern", () => {
    const { session, reads } = run(loaded().session, [resolveEvent(13, alert())]);
    expect([...session.page.alerts.keys()]).toEqual(["fp-eth"]);
    expect(seqsOf(session)[0]).toBe(13);
    // a paused vault or a silent publisher changes values no price tick carries
    expect(reads).toEqual(["targets"]);
  });

  it("keeps the prices of the snapshot as the first points of each series", () => {
    const { session } = loaded();
    const series = session.page.series.get("offchain:BTC/USD:spot:median:1min");
    expect(series?.points).toEqual([{ atMs: Date.parse("2026-11-22T10:00:00.000Z"), value: 86000 }]);
  });
});

describe("reconnecting", () => {
  it("resumes with since = the highest seq received (a heartbeat counts) and replays with no duplicate", () => {
    const live = run(loaded().session, [
      alertEvent(13, alert({ reason: "repeat" })),
      { type: "pong", id: "p", seq: 15 },
    ]);
    const closed = closeSession(live.session, true);
    expect(closed.page.connection).toBe("reconnecting");
    const resumed = run(closed, [hello(18)]);
    expect(resumed.messages).toEqual([{ op: "subscribe", id: "resume", channels: CHANNELS, since: 15 }]);
    const replay = run(resumed.session, [
      subscribed("resume", 18, [other]),
      alertEvent(13, alert({ reason: "repeat" })), // already received: dropped
      resolveEvent(16, alert()),
      alertEvent(19, alert({ fingerprint: "fp-new" })),
    ]);
    expect(seqsOf(replay.session)).toEqual([19, 16, 13, 11, 7, 5, 3]);
    // what happened while away changed the targets' data: read again (the shell makes repeated reads one)
    expect(new Set(replay.reads)).toEqual(new Set(["targets"]));
    expect([...replay.session.page.alerts.keys()].sort()).toEqual(["fp-eth", "fp-new"]);
  });

  it("a heartbeat that arrives before the subscribe is answered does not move the resume point", () => {
    const closed = closeSession(loaded().session, true);
    const early = run(closed, [hello(40), { type: "heartbeat", seq: 40 }]);
    expect(early.session.resume.point).toBe(12);
    const again = run(closeSession(early.session, true), [hello(40)]);
    expect(again.messages).toEqual([{ op: "subscribe", id: "resume", channels: CHANNELS, since: 12 }]);
  });

  it("re-reads what a replayed lifecycle event changed, and asks for a fresh snapshot once", () => {
    const resumed = run(closeSession(loaded().session, true), [
      hello(30),
      subscribed("resume", 30, [alert()]),
      lifecycle(20, "silence_created"),
      lifecycle(21, "silence_expired"),
    ]);
    // silences: the list only (the daemon publishes the alerts they mute again, with their silencedBy)
    expect(new Set(resumed.reads)).toEqual(new Set(["silences"]));
    expect(resumed.messages.filter((m) => m.op === "snapshot")).toEqual([]);
    const reloaded = run(resumed.session, [
      lifecycle(22, "config_reloaded"),
      lifecycle(23, "config_reloaded"),
    ]);
    expect(new Set(reloaded.reads)).toEqual(new Set(["silences", "targets", "status"]));
    expect(reloaded.messages).toEqual([{ op: "snapshot", id: REFRESH_ID }]);
    const answered = run(reloaded.session, [
      { type: "snapshot", id: REFRESH_ID, seq: 30, active: [alert({ silencedBy: ["s1"] })], prices: [] },
    ]);
    expect(answered.session.refreshing).toBe(false);
    expect(answered.session.page.alerts.get("fp-btc")?.silencedBy).toEqual(["s1"]);
    expect(answered.messages).toEqual([]);
  });

  it("takes a live alert republished with its silencedBy as the alert's new state", () => {
    const { session } = run(loaded().session, [
      alertEvent(13, alert({ reason: "repeat", silencedBy: ["s1"] })),
    ]);
    expect(session.page.alerts.get("fp-btc")?.silencedBy).toEqual(["s1"]);
  });

  it("starts over when the resume reaches past the journal (gap), keeping only what the API reads gave", () => {
    let { session } = loaded();
    session = { ...session, page: applyRead(session.page, { resource: "targets", value: [target()] }, 0) };
    const resumed = run(closeSession(session, true), [
      hello(900),
      subscribed("resume", 900, []),
      { type: "gap", from: 13, to: 400 },
    ]);
    expect(resumed.reloads).toBe(1);
    const fresh = reloadSession(resumed.session);
    expect(fresh.resume.point).toBeNull();
    expect(fresh.page.timeline).toEqual([]);
    expect(fresh.page.alerts.size).toBe(0);
    expect(fresh.page.targets).toEqual([target()]);
    expect(run(fresh, [hello(900)]).messages).toEqual([{ op: "snapshot", id: "snapshot" }]);
  });

  it("starts over when the daemon's journal is behind the resume point (state wiped)", () => {
    expect(run(closeSession(loaded().session, true), [hello(2)]).reloads).toBe(1);
  });

  it("starts over when the server refuses the resume subscribe, and only then", () => {
    const resumed = run(closeSession(loaded().session, true), [hello(30)]).session;
    expect(
      run(resumed, [{ type: "error", id: "resume", code: "bad_request", message: "since too old" }]).reloads,
    ).toBe(1);
    expect(
      run(resumed, [{ type: "error", id: null, code: "rate_limited", message: "slow down" }]).reloads,
    ).toBe(0);
  });
});

describe("history shorter than asked", () => {
  it("says where the journal starts instead of reloading", () => {
    const { session, reloads } = run(FRESH_SESSION, [
      hello(500),
      { type: "snapshot", id: "snapshot", seq: 500, active: [], prices: [] },
      subscribed("initial", 500, []),
      { type: "gap", from: 301, to: 420 },
    ]);
    expect(reloads).toBe(0);
    expect(session.page.historyFrom).toBe(421);
  });
});

describe("live price ticks", () => {
  it("add a point per new upstream timestamp and learn the daemon's clock", () => {
    const { session } = run(loaded().session, [
      { type: "price", tick: tick("2026-11-22T10:00:00.500Z", "86100") },
      { type: "price", tick: tick("2026-11-22T10:00:00.500Z", "86100") },
      { type: "price", tick: tick("2026-11-22T10:00:00.900Z", "86200") },
    ]);
    const series = session.page.series.get("offchain:BTC/USD:spot:median:1min");
    expect(series?.points.map((p) => p.value)).toEqual([86000, 86100, 86200]);
    expect(series?.latest?.price).toBe("86200");
    // received at 10:00:01.000 (browser), observed at 10:00:00.900 (daemon)
    expect(session.page.clockOffsetMs).toBe(100);
  });
});
