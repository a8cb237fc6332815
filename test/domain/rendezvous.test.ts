// Rendezvous ownership: one owner per key, minimal movement on join and leave, and the handover wait.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NO_OWNERSHIP, nextOwnership, ownedKeys, ownerOf } from "../../src/domain/rendezvous.js";

const KEYS = Array.from({ length: 60 }, (_, i) => `SYN${i}/USD`);
const memberIds = fc.uniqueArray(fc.stringMatching(/^[a-z0-9-]{1,12}$/), { minLength: 1, maxLength: 8 });
const keyList = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 20 }), { maxLength: 80 });

describe("ownerOf", () => {
  it("has no owner without members", () => {
    expect(ownerOf("BTC/USD", [])).toBeUndefined();
  });

  it("does not depend on the order members are listed in", () => {
    expect(ownerOf("BTC/USD", ["a", "b", "c"])).toBe(ownerOf("BTC/USD", ["c", "a", "b"]));
  });

  it("gives every key exactly one owner among the members", () => {
    fc.assert(
      fc.property(keyList, memberIds, (keys, members) => {
        const counts = keys.map((key) => members.filter((m) => ownedKeys(keys, members, m).has(key)).length);
        expect(counts.every((count) => count === 1)).toBe(true);
      }),
    );
  });

  it("moves only the leaver's keys when a member leaves", () => {
    fc.assert(
      fc.property(keyList, memberIds, fc.nat(), (keys, members, pick) => {
        fc.pre(members.length >= 2);
        const leaver = members[pick % members.length] ?? "";
        const rest = members.filter((m) => m !== leaver);
        for (const key of keys) {
          const before = ownerOf(key, members);
          if (before !== leaver) expect(ownerOf(key, rest)).toBe(before);
        }
      }),
    );
  });

  it("moves keys only to the joiner when a member joins", () => {
    fc.assert(
      fc.property(keyList, memberIds, (keys, members) => {
        const [joiner, ...rest] = members;
        fc.pre(joiner !== undefined && rest.length >= 1);
        for (const key of keys) {
          const after = ownerOf(key, members);
          if (after !== joiner) expect(after).toBe(ownerOf(key, rest));
        }
      }),
    );
  });

  it("spreads 60 keys over 3 members roughly evenly", () => {
    const sizes = ["m1", "m2", "m3"].map((m) => ownedKeys(KEYS, ["m1", "m2", "m3"], m).size);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(60);
    for (const size of sizes) expect(size).toBeGreaterThanOrEqual(10);
  });
});

describe("nextOwnership", () => {
  const step = { keys: KEYS, me: "m2", nowMs: 1_000, handoverWaitMs: 5_000 };

  it("takes everything at once when it is the first member", () => {
    const next = nextOwnership(NO_OWNERSHIP, { ...step, me: "m1", members: ["m1"], previousMembers: [] });
    expect(next.owned.size).toBe(60);
    expect(next.pendingUntilMs.size).toBe(0);
  });

  it("waits before taking keys a live member holds (a join), then takes them", () => {
    const members = ["m1", "m2"];
    const joined = nextOwnership(NO_OWNERSHIP, { ...step, members, previousMembers: [] });
    const mine = ownedKeys(KEYS, members, "m2");
    expect(mine.size).toBeGreaterThan(0);
    expect(joined.owned.size).toBe(0);
    expect([...joined.pendingUntilMs.values()].every((t) => t === 6_000)).toBe(true);
    const early = nextOwnership(joined, { ...step, members, previousMembers: members, nowMs: 5_999 });
    expect(early.owned.size).toBe(0);
    const later = nextOwnership(early, { ...step, members, previousMembers: members, nowMs: 6_000 });
    expect(later.owned).toEqual(mine);
    expect(later.pendingUntilMs.size).toBe(0);
  });

  it("takes a dead member's keys at once", () => {
    const before = { owned: ownedKeys(KEYS, ["m1", "m2", "m3"], "m2"), pendingUntilMs: new Map() };
    const next = nextOwnership(before, {
      ...step,
      members: ["m1", "m2"],
      previousMembers: ["m1", "m2", "m3"],
    });
    expect(next.owned).toEqual(ownedKeys(KEYS, ["m1", "m2"], "m2"));
    expect(next.owned.size).toBeGreaterThan(before.owned.size);
    expect(next.pendingUntilMs.size).toBe(0);
  });

  it("drops at once what it no longer owns, and everything when it is not a live member", () => {
    const before = { owned: new Set(KEYS), pendingUntilMs: new Map() };
    const joined = nextOwnership(before, { ...step, members: ["m1", "m2"], previousMembers: ["m2"] });
    expect(joined.owned).toEqual(ownedKeys(KEYS, ["m1", "m2"], "m2"));
    const fenced = nextOwnership(before, { ...step, members: ["m1"], previousMembers: ["m1", "m2"] });
    expect(fenced.owned.size).toBe(0);
  });
});
