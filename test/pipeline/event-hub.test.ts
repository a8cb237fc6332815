// The hub's muting: each transition stamped with the silences that keep it from sinks, live and after a restart.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AlertPayload } from "../../src/domain/events.js";
import { createEventHub, type EventHub } from "../../src/pipeline/event-hub.js";
import { createJournal, type Journal } from "../../src/state/journal.js";
import { nthAlert, resolvedOf } from "../sinks/chatops/helpers.js";

/** One step of an alert's life: what the silences say now, and what the engine publishes. */
type Step = readonly [silencing: readonly string[], action: "first" | "repeat" | "resolve"];

/** A hub whose `silencing` hook answers what the test last set for each fingerprint. */
function hubOver(journal: Journal): {
  hub: EventHub;
  muteWith(fingerprint: string, ids: readonly string[]): void;
} {
  const silencing = new Map<string, readonly string[]>();
  const hub = createEventHub({
    journal,
    nowMs: () => 0,
    version: "test",
    silencing: (alert) => silencing.get(alert.fingerprint) ?? [],
  });
  return { hub, muteWith: (fingerprint, ids) => silencing.set(fingerprint, ids) };
}

/** A hub after a restart: the previous run's journal, and its firing alerts as the checkpoint holds them. */
function restarted(previous: { hub: EventHub }, journal: Journal): ReturnType<typeof hubOver> {
  const next = hubOver(createJournal(journal.capacity, journal.entries()));
  next.hub.restoreActive(
    previous.hub.activeAlerts().map(({ silencedBy: _decided, ...alert }): AlertPayload => alert),
  );
  return next;
}

function publish(target: ReturnType<typeof hubOver>, alert: AlertPayload, [ids, action]: Step): AlertPayload {
  target.muteWith(alert.fingerprint, ids);
  const transition = action === "resolve" ? resolvedOf(alert) : { ...alert, reason: action };
  return target.hub.publishAlert(transition).alert;
}

const btc = nthAlert(1);

// [name, steps, the silencedBy each transition carries]
const LIVES: readonly [string, readonly Step[], readonly (readonly string[])[]][] = [
  [
    "never silenced",
    [
      [[], "first"],
      [[], "repeat"],
      [[], "resolve"],
    ],
    [[], [], []],
  ],
  [
    "silenced throughout: the resolve too",
    [
      [["s1"], "first"],
      [["s1"], "repeat"],
      [[], "resolve"],
    ],
    [["s1"], ["s1"], ["s1"]],
  ],
  [
    "notified, then silenced: the resolve goes out",
    [
      [[], "first"],
      [["s1"], "repeat"],
      [["s1"], "resolve"],
    ],
    [[], ["s1"], []],
  ],
  [
    "silenced, then the silence ended: notified",
    [
      [["s1"], "first"],
      [[], "repeat"],
      [[], "resolve"],
    ],
    [["s1"], [], []],
  ],
  [
    "silenced by one, then another",
    [
      [["s1"], "first"],
      [["s2"], "repeat"],
      [[], "resolve"],
    ],
    [["s1"], ["s2"], ["s2"]],
  ],
  [
    "notified, silenced, unsilenced, silenced again",
    [
      [[], "first"],
      [["s1"], "repeat"],
      [[], "repeat"],
      [["s2"], "repeat"],
      [["s2"], "resolve"],
    ],
    [[], ["s1"], [], ["s2"], []],
  ],
  [
    "a new firing after a resolve starts afresh",
    [
      [[], "first"],
      [[], "resolve"],
      [["s1"], "first"],
      [["s1"], "resolve"],
    ],
    [[], [], ["s1"], ["s1"]],
  ],
];

describe("event hub muting", () => {
  it.each(LIVES)("%s", (_name, steps, expected) => {
    const live = hubOver(createJournal(100));
    expect(steps.map((step) => publish(live, btc, step).silencedBy ?? [])).toEqual(expected);
  });

  it.each(LIVES)("after a restart at any step: %s", (_name, steps, expected) => {
    for (let cut = 1; cut < steps.length; cut++) {
      const journal = createJournal(100);
      const before = hubOver(journal);
      const published = steps.slice(0, cut).map((step) => publish(before, btc, step).silencedBy ?? []);
      const after = restarted(before, journal);
      // the restored alert shows the muting its latest announcement carried
      const restored = after.hub.activeAlerts()[0];
      if (restored !== undefined) expect(restored.silencedBy ?? []).toEqual(published.at(-1));
      published.push(...steps.slice(cut).map((step) => publish(after, btc, step).silencedBy ?? []));
      expect(published, `restart after step ${cut}`).toEqual(expected);
    }
  });

  it("keeps silencedBy absent, not empty, on a transition no silence touches", () => {
    const live = hubOver(createJournal(10));
    expect("silencedBy" in publish(live, btc, [["s1"], "first"])).toBe(true);
    expect("silencedBy" in publish(live, btc, [[], "repeat"])).toBe(false);
    expect("silencedBy" in publish(live, btc, [[], "resolve"])).toBe(false);
  });

  it("keeps each firing alert's muting when the engine refreshes its payload", () => {
    const live = hubOver(createJournal(10));
    publish(live, btc, [["s1"], "first"]);
    live.hub.refreshActive([{ ...btc, value: 0.09 }]);
    expect(live.hub.activeAlerts()).toEqual([{ ...btc, value: 0.09, silencedBy: ["s1"] }]);
  });

  it("a mute decision replayed from the journal equals the live one", () => {
    const FINGERPRINTS = [1, 2, 3];
    const ids = fc.constantFrom<readonly string[]>([], [], ["s1"], ["s2"], ["s1", "s2"]);
    const op = fc.record({ alert: fc.constantFrom(...FINGERPRINTS), ids, resolve: fc.boolean() });
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 30 }), fc.nat(), (ops, cutAt) => {
        const cut = cutAt % ops.length;
        const liveJournal = createJournal(1_000);
        const live = hubOver(liveJournal);
        const journal = createJournal(1_000);
        let replayed = hubOver(journal);
        const firing = new Set<number>();
        // an oracle apart from the code: was every announcement of the current firing muted?
        const allMuted = new Map<number, boolean>();
        ops.forEach(({ alert: i, ids: now, resolve }, index) => {
          if (index === cut) replayed = restarted(replayed, journal);
          const action = resolve ? "resolve" : firing.has(i) ? "repeat" : "first";
          if (action === "resolve" && !firing.has(i)) return;
          const step: Step = [now, action];
          const decided = publish(live, nthAlert(i), step).silencedBy ?? [];
          expect(publish(replayed, nthAlert(i), step).silencedBy ?? []).toEqual(decided);
          if (action === "resolve") {
            expect(decided.length > 0).toBe(allMuted.get(i));
            firing.delete(i);
          } else {
            expect(decided).toEqual(now);
            allMuted.set(i, (action === "first" || allMuted.get(i) === true) && now.length > 0);
            firing.add(i);
          }
        });
      }),
      { numRuns: 500 },
    );
  });
});

describe("releaseActive (a target handed to another cluster member)", () => {
  it("stops listing the alerts without journaling anything, and forgets their muting", () => {
    const journal = createJournal(100);
    const target = hubOver(journal);
    publish(target, btc, [["s1"], "first"]);
    const seq = journal.lastSeq;
    target.hub.releaseActive([btc.fingerprint]);
    expect(target.hub.activeAlerts()).toEqual([]);
    expect(journal.lastSeq).toBe(seq);
    // nothing remembered: a later announcement of the fingerprint starts unmuted
    expect(target.hub.wasNotified(btc.fingerprint)).toBe(true);
  });
});
