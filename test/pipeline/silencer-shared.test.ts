// The silencer's cluster options on virtual time: another member's silence taken (newer wins, nothing announced),
// changes by time announced only when claimed, re-announcements limited to the alerts this member speaks for.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { JournaledEvent } from "../../src/domain/events.js";
import type { Silence } from "../../src/domain/silence.js";
import { createEventHub } from "../../src/pipeline/event-hub.js";
import { createSilencer, silenceClaim } from "../../src/pipeline/silencer.js";
import { createJournal } from "../../src/state/journal.js";
import { silenceFilePath } from "../../src/state/silence-file.js";
import { HOUR_MS, MINUTE_MS, T0, iso, silence } from "../domain/helpers.js";
import { captureLogger, nthAlert } from "../sinks/chatops/helpers.js";
import { createVirtualClock } from "./helpers.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const BTC = nthAlert(1, { labels: { pair: "BTC/USD", market: "offchain" } });
const ETH = nthAlert(2, { labels: { pair: "ETH/USD", market: "offchain" } });

/** A silencer with cluster options over a hub; `claims` decides which claims this member wins. */
function member(claims: (claim: string) => boolean) {
  const clock = createVirtualClock(T0);
  const dir = mkdtempSync(join(tmpdir(), "pm-silencer-shared-"));
  dirs.push(dir);
  const journal = createJournal(1_000);
  const claimed: string[] = [];
  const stored: Silence[] = [];
  const silencer = createSilencer({
    path: silenceFilePath(dir),
    nowMs: clock.nowMs,
    logger: captureLogger().logger,
    newId: () => "local-1",
    setTimer: clock.setTimer,
    clearTimer: clock.clearTimer,
    // this member speaks for BTC/USD only (ETH/USD is another member's)
    remuteScope: () => (alert) => alert.labels["pair"] === "BTC/USD",
    announceOnce: (claim, announce) => {
      claimed.push(claim);
      if (claims(claim)) announce();
    },
    onStored: (s) => stored.push(s),
  });
  const hub = createEventHub({
    journal,
    nowMs: clock.nowMs,
    version: "test",
    silencing: (alert) => silencer.silencing(alert),
  });
  silencer.start(hub);
  hub.publishAlert(BTC);
  hub.publishAlert(ETH);
  let seen = journal.lastSeq;
  const published = (): string[] => {
    const { events } = journal.after(seen);
    seen = journal.lastSeq;
    return events.map(line);
  };
  return { clock, silencer, claimed, stored, published };
}

function line(event: JournaledEvent): string {
  if (event.type === "lifecycle") return `${event.event} ${String(event.detail?.["cause"])}`;
  const { labels, reason, silencedBy } = event.alert;
  return `${labels["pair"]} ${reason}${silencedBy === undefined ? "" : ` [${silencedBy.join(",")}]`}`;
}

const everyPair = (id: string, endsAtMs: number): Silence => ({
  ...silence(id, T0, endsAtMs),
  matchers: [{ name: "market", value: "offchain", isRegex: false, isEqual: true }],
});

describe("silencer, shared (cluster mode)", () => {
  it("takes another member's silence without announcing it, and re-announces only the alerts it speaks for", () => {
    const m = member(() => true);
    const remote = everyPair("remote-1", T0 + HOUR_MS);
    expect(m.silencer.merge(remote)).toBe(true);
    expect(m.published()).toEqual(["BTC/USD repeat [remote-1]"]);
    // the same version again, or an older one, changes nothing
    expect(m.silencer.merge(remote)).toBe(false);
    expect(m.silencer.merge({ ...remote, comment: "old", updatedAt: iso(T0 - MINUTE_MS) })).toBe(false);
    // the maker expires it: taken (newer), unmuted, and this member announces no end of its own
    m.clock.advance(MINUTE_MS);
    const ended = { ...remote, endsAt: iso(T0 + MINUTE_MS), updatedAt: iso(T0 + MINUTE_MS) };
    expect(m.silencer.merge(ended)).toBe(true);
    expect(m.published()).toEqual(["BTC/USD repeat"]);
    expect(m.silencer.get("remote-1")?.status.state).toBe("expired");
    m.clock.advance(HOUR_MS);
    expect(m.published()).toEqual([]);
    expect(m.claimed).toEqual([]);
  });

  it("keeps the same one of two versions changed in the same millisecond, whichever it held first", () => {
    const base = everyPair("remote-1", T0 + HOUR_MS);
    const a = { ...base, comment: "from member a" };
    const b = { ...base, comment: "from member b" };
    const [first, second] = [member(() => true), member(() => true)];
    first.silencer.merge(a);
    first.silencer.merge(b);
    second.silencer.merge(b);
    second.silencer.merge(a);
    // "from member b" sorts after "from member a": every member keeps b, in whatever order the versions came
    expect(first.silencer.get("remote-1")?.comment).toBe("from member b");
    expect(second.silencer.get("remote-1")?.comment).toBe("from member b");
  });

  it("announces a silence's end only when it wins the claim, and shares what it stores", () => {
    const endsAtMs = T0 + 10 * MINUTE_MS;
    for (const wins of [true, false]) {
      const m = member(() => wins);
      const remote = everyPair("remote-2", endsAtMs);
      m.silencer.merge(remote);
      m.published();
      m.clock.advance(10 * MINUTE_MS);
      expect(m.claimed).toEqual([silenceClaim(remote, "ended")]);
      expect(m.claimed).toEqual([`ended:remote-2:${endsAtMs}`]);
      // the end is announced by the winner only; unmuting its own alerts is every member's
      expect(m.published()).toEqual([...(wins ? ["silence_expired ended"] : []), "BTC/USD repeat"]);
    }
    const m = member(() => true);
    const put = m.silencer.put({
      matchers: [{ name: "pair", value: "ETH/USD", isRegex: false, isEqual: true }],
      startsAt: iso(T0),
      endsAt: iso(T0 + HOUR_MS),
      createdBy: "alice",
      comment: "c",
    });
    expect("silence" in put).toBe(true);
    m.silencer.expire("local-1");
    expect(m.stored.map((s) => [s.id, s.endsAt])).toEqual([
      ["local-1", iso(T0 + HOUR_MS)],
      ["local-1", iso(T0)],
    ]);
    // ETH/USD is another member's: it is not re-announced here
    expect(m.published()).toEqual(["silence_created created", "silence_expired expired"]);
  });
});
