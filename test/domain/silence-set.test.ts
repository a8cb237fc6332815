// The set of silences as a value: create, update in place or replace, expire early, prune; limits and refusals.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { silenceState, type Silence } from "../../src/domain/silence.js";
import {
  SILENCE_LIMITS,
  compareSilenceVersions,
  expireSilence,
  pruneSilences,
  putSilence,
  type SilenceChange,
  type SilenceInput,
  type SilenceRefusal,
} from "../../src/domain/silence-set.js";
import { HOUR_MS, MINUTE_MS, T0, iso, matcher, silence } from "./helpers.js";

const NOW = T0;
const BTC = [matcher("pair", "=", "BTC/USD")];
const ETH = [matcher("pair", "=", "ETH/USD")];

/** Ids n1, n2, ... in creation order. */
function ids(): () => string {
  let next = 0;
  return () => `n${++next}`;
}

function input(overrides: Partial<SilenceInput> = {}): SilenceInput {
  return {
    matchers: BTC,
    startsAt: iso(NOW - MINUTE_MS),
    endsAt: iso(NOW + HOUR_MS),
    createdBy: "alice",
    comment: "deploy",
    ...overrides,
  };
}

function changed(result: SilenceChange | SilenceRefusal): SilenceChange {
  if (!("silences" in result)) throw new Error(`refused: ${result.status} ${result.message}`);
  return result;
}

function refused(result: SilenceChange | SilenceRefusal): SilenceRefusal {
  if ("silences" in result) throw new Error(`accepted ${result.silence.id}`);
  return result;
}

/** The `updatedAt` of a version replacing `existing` at NOW: NOW, or 1 ms past it when it was made at NOW too. */
const replacing = (existing: Silence): string => iso(Math.max(NOW, Date.parse(existing.updatedAt) + 1));

const active = silence("a", NOW - HOUR_MS, NOW + HOUR_MS);
const pending = silence("p", NOW + HOUR_MS, NOW + 2 * HOUR_MS);
const expired = silence("x", NOW - 2 * HOUR_MS, NOW - HOUR_MS);

describe("putSilence: create", () => {
  it("creates a silence from the input, a start in the past becoming now", () => {
    const before = [active];
    const { silences, silence: created, replaced } = changed(putSilence(before, input(), NOW, ids()));
    expect(created).toEqual({
      id: "n1",
      matchers: BTC,
      startsAt: iso(NOW),
      endsAt: iso(NOW + HOUR_MS),
      createdBy: "alice",
      comment: "deploy",
      updatedAt: iso(NOW),
    });
    expect(replaced).toBeUndefined();
    expect(silences).toEqual([active, created]);
    expect(before).toEqual([active]);
  });

  it.each<[string, number, number]>([
    ["a start in the future is kept", NOW + MINUTE_MS, NOW + MINUTE_MS],
    ["a start now is kept", NOW, NOW],
    ["a start long ago becomes now", NOW - 30 * 24 * HOUR_MS, NOW],
  ])("%s", (_name, startsAtMs, expectedMs) => {
    const { silence: created } = changed(putSilence([], input({ startsAt: iso(startsAtMs) }), NOW, ids()));
    expect(created.startsAt).toBe(iso(expectedMs));
  });

  it.each<[string, Partial<SilenceInput>, string]>([
    // the start became now, so the end is before it
    ["an end in the past", { endsAt: iso(NOW - 1) }, "endsAt: "],
    [
      "an end in the past, after a start in the past",
      { startsAt: iso(NOW - HOUR_MS), endsAt: iso(NOW - 1) },
      "endsAt: ",
    ],
    ["an end now", { endsAt: iso(NOW) }, "endsAt: must be in the future"],
    [
      "an end before a future start",
      { startsAt: iso(NOW + 2 * HOUR_MS), endsAt: iso(NOW + HOUR_MS) },
      "endsAt: must not be before startsAt",
    ],
    ["no matchers", { matchers: [] }, "matchers: "],
    ["a bad regex", { matchers: [matcher("pair", "=~", "(")] }, "matchers[0].value: "],
    ["a matcher matching every alert", { matchers: [matcher("pair", "=~", ".*")] }, "matchers: "],
  ])("refuses %s with 400 and the field", (_name, overrides, message) => {
    const refusal = refused(putSilence([active], input(overrides), NOW, ids()));
    expect(refusal.status).toBe(400);
    expect(refusal.error).toBe("invalid_silence");
    expect(refusal.message.startsWith(message)).toBe(true);
  });

  it("refuses an id it does not hold with 404", () => {
    expect(refused(putSilence([active], input({ id: "nope" }), NOW, ids()))).toMatchObject({
      status: 404,
      error: "not_found",
    });
  });
});

describe("putSilence: update", () => {
  it.each<[string, Silence, Partial<SilenceInput>, string]>([
    ["an active one keeps its start", active, {}, active.startsAt],
    [
      "an active one keeps its start even when told another",
      active,
      { startsAt: iso(NOW + MINUTE_MS) },
      active.startsAt,
    ],
    [
      "a pending one takes the new start",
      pending,
      { startsAt: iso(NOW + 30 * MINUTE_MS) },
      iso(NOW + 30 * MINUTE_MS),
    ],
    ["a pending one told a past start starts now", pending, { startsAt: iso(NOW - MINUTE_MS) }, iso(NOW)],
  ])("in place, with the same matchers: %s", (_name, existing, overrides, startsAt) => {
    const others = [expired, existing, silence("z", NOW - HOUR_MS, NOW + HOUR_MS, ETH)];
    const update = input({
      id: existing.id,
      comment: "longer",
      endsAt: iso(NOW + 3 * HOUR_MS),
      ...overrides,
    });
    const result = changed(putSilence(others, update, NOW, ids()));
    expect(result.replaced).toBeUndefined();
    expect(result.silence).toEqual({
      ...existing,
      startsAt,
      endsAt: iso(NOW + 3 * HOUR_MS),
      comment: "longer",
      createdBy: "alice",
      updatedAt: replacing(existing),
    });
    expect(result.silences).toEqual([expired, result.silence, others[2]]);
  });

  it("in place when the matchers are the same in another order", () => {
    const two = silence("a", NOW - HOUR_MS, NOW + HOUR_MS, [...BTC, matcher("rule", "=~", "price_.*")]);
    const result = changed(
      putSilence(
        [two],
        input({ id: "a", matchers: [matcher("rule", "=~", "price_.*"), ...BTC] }),
        NOW,
        ids(),
      ),
    );
    expect(result.silence.id).toBe("a");
    expect(result.silences).toHaveLength(1);
  });

  it.each<[string, Silence]>([
    ["an active one", active],
    ["a pending one", pending],
  ])("other matchers on %s: the old one ends now, a new one is created", (_name, existing) => {
    const result = changed(putSilence([existing], input({ id: existing.id, matchers: ETH }), NOW, ids()));
    expect(result.silence).toMatchObject({ id: "n1", matchers: ETH, startsAt: iso(NOW) });
    // a pending one ends before it ever starts
    const startsAt = silenceState(existing, NOW) === "pending" ? iso(NOW) : existing.startsAt;
    const ended = { ...existing, startsAt, endsAt: iso(NOW), updatedAt: replacing(existing) };
    expect(result.replaced).toEqual(ended);
    expect(result.silences).toEqual([ended, result.silence]);
    expect(silenceState(ended, NOW)).toBe("expired");
  });

  it("an expired one is left as it was and a new one is created (nothing replaced)", () => {
    const result = changed(putSilence([expired], input({ id: "x" }), NOW, ids()));
    expect(result.silence.id).toBe("n1");
    expect(result.replaced).toBeUndefined();
    expect(result.silences).toEqual([expired, result.silence]);
  });
});

/** `count` silences of distinct pairs, all active at NOW. */
function liveSet(count: number): Silence[] {
  return Array.from({ length: count }, (_, i) =>
    silence(`l${i}`, NOW - HOUR_MS, NOW + HOUR_MS, [matcher("pair", "=", `T${i}/USD`)]),
  );
}

describe("putSilence: the live limit", () => {
  const full = liveSet(SILENCE_LIMITS.maxLive);

  it("refuses one more live silence with 429", () => {
    expect(refused(putSilence(full, input(), NOW, ids()))).toMatchObject({
      status: 429,
      error: "too_many_silences",
    });
    expect(
      refused(
        putSilence(full, input({ startsAt: iso(NOW + HOUR_MS), endsAt: iso(NOW + 2 * HOUR_MS) }), NOW, ids()),
      ).status,
    ).toBe(429);
  });

  it("counts neither expired silences nor the one an update replaces", () => {
    const oneFree = [...full.slice(1), expired, { ...full[0]!, endsAt: iso(NOW) }];
    expect(changed(putSilence(oneFree, input(), NOW, ids())).silences).toHaveLength(full.length + 2);
    const replace = input({ id: "l0", matchers: ETH });
    expect(changed(putSilence(full, replace, NOW, ids())).replaced?.id).toBe("l0");
    const inPlace = input({ id: "l0", matchers: full[0]!.matchers, comment: "again" });
    expect(changed(putSilence(full, inPlace, NOW, ids())).silence.comment).toBe("again");
  });
});

describe("expireSilence", () => {
  it.each<[string, Silence, Partial<Silence>]>([
    ["an active one ends now", active, { endsAt: iso(NOW) }],
    ["a pending one ends before it starts", pending, { startsAt: iso(NOW), endsAt: iso(NOW) }],
  ])("%s", (_name, existing, fields) => {
    const others = [expired, existing, silence("z", NOW - HOUR_MS, NOW + HOUR_MS, ETH)];
    const result = changed(expireSilence(others, existing.id, NOW));
    expect(result.silence).toEqual({ ...existing, ...fields, updatedAt: replacing(existing) });
    expect(silenceState(result.silence, NOW)).toBe("expired");
    expect(result.silences).toEqual([expired, result.silence, others[2]]);
  });

  it("orders versions made within one millisecond: an update, then its expiry, each newer than the one before", () => {
    const made = changed(putSilence([], input(), NOW, ids())).silence;
    const updated = changed(putSilence([made], input({ id: made.id, comment: "again" }), NOW, ids())).silence;
    const ended = changed(expireSilence([updated], made.id, NOW)).silence;
    const times = [made, updated, ended].map((s) => Date.parse(s.updatedAt));
    expect(times).toEqual([NOW, NOW + 1, NOW + 2]);
    expect(ended.endsAt).toBe(iso(NOW));
  });

  it.each<[string, readonly Silence[], string, number, string]>([
    ["an unknown id", [active], "nope", 404, "not_found"],
    ["an expired one", [expired], "x", 409, "already_expired"],
    ["one that ended just now", [silence("e", NOW - HOUR_MS, NOW)], "e", 409, "already_expired"],
  ])("refuses %s", (_name, silences, id, status, error) => {
    expect(refused(expireSilence(silences, id, NOW))).toMatchObject({ status, error });
  });
});

describe("pruneSilences", () => {
  const { retentionMs, maxExpired } = SILENCE_LIMITS;
  const endedAgo = (id: string, agoMs: number): Silence => silence(id, NOW - agoMs - HOUR_MS, NOW - agoMs);

  it.each<[string, readonly Silence[], readonly string[]]>([
    ["nothing", [], []],
    ["live ones stay", [active, pending], ["a", "p"]],
    ["an expired one inside the retention stays", [endedAgo("e", retentionMs - 1)], ["e"]],
    ["one expired exactly the retention ago goes", [endedAgo("e", retentionMs)], []],
    ["one expired longer ago goes", [active, endedAgo("e", retentionMs + HOUR_MS), pending], ["a", "p"]],
  ])("%s", (_name, silences, kept) => {
    expect(pruneSilences(silences, NOW).map((s) => s.id)).toEqual(kept);
  });

  it("keeps the newest maxExpired expired ones, in their order", () => {
    const many = Array.from({ length: maxExpired + 3 }, (_, i) => endedAgo(`e${i}`, (i + 1) * 1_000));
    const shuffled = [many[maxExpired + 1]!, active, ...many.slice(0, maxExpired + 1), many[maxExpired + 2]!];
    const pruned = pruneSilences(shuffled, NOW);
    expect(pruned.map((s) => s.id)).toEqual(["a", ...many.slice(0, maxExpired).map((s) => s.id)]);
  });

  it("answers the same array when nothing is pruned (the caller skips the write)", () => {
    const silences = [active, pending, endedAgo("e", HOUR_MS)];
    expect(pruneSilences(silences, NOW)).toBe(silences);
  });
});

describe("properties", () => {
  type Op =
    | {
        readonly kind: "create";
        readonly pair: number;
        readonly startMin: number;
        readonly lengthMin: number;
      }
    | { readonly kind: "update"; readonly pick: number; readonly pair: number; readonly lengthMin: number }
    | { readonly kind: "expire"; readonly pick: number }
    | { readonly kind: "wait"; readonly minutes: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      kind: fc.constant("create" as const),
      pair: fc.integer({ min: 0, max: 3 }),
      startMin: fc.integer({ min: -10, max: 30 }),
      lengthMin: fc.integer({ min: 1, max: 60 }),
    }),
    fc.record({
      kind: fc.constant("update" as const),
      pick: fc.nat(),
      pair: fc.integer({ min: 0, max: 3 }),
      lengthMin: fc.integer({ min: 1, max: 60 }),
    }),
    fc.record({ kind: fc.constant("expire" as const), pick: fc.nat() }),
    fc.record({ kind: fc.constant("wait" as const), minutes: fc.integer({ min: 0, max: 90 }) }),
  );

  /** Apply `ops` to a set that starts `free` short of the live limit; check `invariant` after each step. */
  function run(
    ops: readonly Op[],
    free: number,
    invariant: (silences: readonly Silence[], nowMs: number) => void,
  ) {
    let silences: readonly Silence[] = liveSet(SILENCE_LIMITS.maxLive - free);
    let nowMs = NOW;
    const newId = ids();
    for (const step of ops) {
      const pick = (n: number): Silence | undefined => silences[silences.length - 1 - (n % silences.length)];
      let result: SilenceChange | SilenceRefusal | undefined;
      switch (step.kind) {
        case "create":
          result = putSilence(
            silences,
            input({
              matchers: [matcher("pair", "=", `P${step.pair}`)],
              startsAt: iso(nowMs + step.startMin * MINUTE_MS),
              endsAt: iso(nowMs + (step.startMin + step.lengthMin) * MINUTE_MS),
            }),
            nowMs,
            newId,
          );
          break;
        case "update": {
          const target = pick(step.pick);
          if (target !== undefined)
            result = putSilence(
              silences,
              input({
                id: target.id,
                matchers: [matcher("pair", "=", `P${step.pair}`)],
                endsAt: iso(nowMs + step.lengthMin * MINUTE_MS),
              }),
              nowMs,
              newId,
            );
          break;
        }
        case "expire": {
          const target = pick(step.pick);
          if (target !== undefined) result = expireSilence(silences, target.id, nowMs);
          break;
        }
        case "wait":
          nowMs += step.minutes * MINUTE_MS;
          silences = pruneSilences(silences, nowMs);
          break;
      }
      if (result !== undefined && "silences" in result) silences = result.silences;
      invariant(silences, nowMs);
    }
  }

  it("putSilence and expireSilence never leave more than maxLive live silences, nor two with one id", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 25 }), fc.integer({ min: 0, max: 3 }), (ops, free) => {
        run(ops, free, (silences, nowMs) => {
          const live = silences.filter((s) => silenceState(s, nowMs) !== "expired");
          expect(live.length).toBeLessThanOrEqual(SILENCE_LIMITS.maxLive);
          expect(new Set(silences.map((s) => s.id)).size).toBe(silences.length);
        });
      }),
      { numRuns: 40 },
    );
  });

  it("pruneSilences keeps every live silence and only expired ones within the retention, at most maxExpired", () => {
    const aSilence = fc
      .tuple(fc.integer({ min: -200, max: 10 }), fc.integer({ min: 0, max: 200 }))
      .map(
        ([startHours, hours]) => [T0 + startHours * HOUR_MS, T0 + (startHours + hours) * HOUR_MS] as const,
      );
    fc.assert(
      fc.property(fc.array(aSilence, { maxLength: 40 }), (windows) => {
        const silences = windows.map(([startsAtMs, endsAtMs], i) => silence(`s${i}`, startsAtMs, endsAtMs));
        const pruned = pruneSilences(silences, NOW);
        const live = silences.filter((s) => silenceState(s, NOW) !== "expired");
        expect(pruned.filter((s) => silenceState(s, NOW) !== "expired")).toEqual(live);
        for (const s of pruned)
          if (silenceState(s, NOW) === "expired")
            expect(NOW - Date.parse(s.endsAt)).toBeLessThan(SILENCE_LIMITS.retentionMs);
        const within = silences.filter(
          (s) =>
            silenceState(s, NOW) === "expired" && NOW - Date.parse(s.endsAt) < SILENCE_LIMITS.retentionMs,
        );
        // small sets: every expired silence within the retention is kept, order preserved
        expect(pruned).toEqual(silences.filter((s) => live.includes(s) || within.includes(s)));
      }),
    );
  });

  it("compareSilenceVersions: the later updatedAt wins; a same-millisecond tie goes to the same version either way", () => {
    const a = silence("s1", NOW, NOW + HOUR_MS);
    const later = { ...a, comment: "a", updatedAt: iso(NOW + 1) };
    expect(compareSilenceVersions(later, a)).toBe(1);
    expect(compareSilenceVersions(a, later)).toBe(-1);
    expect(compareSilenceVersions(a, { ...a })).toBe(0);
    const fromA = { ...a, comment: "a" };
    const fromB = { ...a, comment: "b" };
    expect(compareSilenceVersions(fromB, fromA)).toBe(1);
    expect(compareSilenceVersions(fromA, fromB)).toBe(-1);
    // key order is not content: the same version written by another member's JSON encoder
    const reordered: Silence = {
      updatedAt: a.updatedAt,
      comment: a.comment,
      createdBy: a.createdBy,
      endsAt: a.endsAt,
      startsAt: a.startsAt,
      matchers: a.matchers.map((m) => ({
        isEqual: m.isEqual,
        isRegex: m.isRegex,
        value: m.value,
        name: m.name,
      })),
      id: a.id,
    };
    expect(compareSilenceVersions(a, reordered)).toBe(0);
  });

  it("compareSilenceVersions: an unparsable updatedAt is the oldest, whichever side it is on; two of them tie-break by text", () => {
    const dated = silence("s1", NOW, NOW + HOUR_MS);
    const undated = { ...dated, comment: "b", updatedAt: "not a time" };
    expect(compareSilenceVersions(dated, undated)).toBe(1);
    expect(compareSilenceVersions(undated, dated)).toBe(-1);
    const otherUndated = { ...undated, comment: "a", updatedAt: "" };
    expect(compareSilenceVersions(undated, otherUndated)).toBe(1);
    expect(compareSilenceVersions(otherUndated, undated)).toBe(-1);
    expect(compareSilenceVersions(undated, { ...undated })).toBe(0);
  });

  it("compareSilenceVersions: keeping the winner of versions in any order of arrival leaves the same one (property)", () => {
    // few values per field, so that ties on updatedAt with different content are common
    const version: fc.Arbitrary<Silence> = fc
      .record({
        updatedMs: fc.integer({ min: 0, max: 2 }),
        endMin: fc.integer({ min: 1, max: 3 }),
        pair: fc.constantFrom("BTC/USD", "ETH/USD"),
        isRegex: fc.boolean(),
        isEqual: fc.boolean(),
        createdBy: fc.constantFrom("alice", "bob"),
        comment: fc.constantFrom("", "deploy", "ü", "\u2028"),
      })
      .map((v) => ({
        id: "s1",
        matchers: [{ name: "pair", value: v.pair, isRegex: v.isRegex, isEqual: v.isEqual }],
        startsAt: iso(NOW),
        endsAt: iso(NOW + v.endMin * MINUTE_MS),
        createdBy: v.createdBy,
        comment: v.comment,
        updatedAt: iso(NOW + v.updatedMs),
      }));
    const keep = (held: Silence, arrived: Silence): Silence =>
      compareSilenceVersions(arrived, held) > 0 ? arrived : held;
    const arrivals = fc
      .array(version, { minLength: 1, maxLength: 6 })
      .chain((versions) =>
        fc.tuple(
          fc.constant(versions),
          fc.shuffledSubarray(versions, { minLength: versions.length, maxLength: versions.length }),
        ),
      );
    fc.assert(
      fc.property(arrivals, ([versions, reordered]) => {
        const [first, ...rest] = versions;
        const [otherFirst, ...otherRest] = reordered;
        expect(otherRest.reduce(keep, otherFirst!)).toEqual(rest.reduce(keep, first!));
        for (const a of versions)
          for (const b of versions) {
            expect(Math.sign(compareSilenceVersions(a, b)) + Math.sign(compareSilenceVersions(b, a))).toBe(0);
            expect(compareSilenceVersions(a, b) === 0).toBe(JSON.stringify(a) === JSON.stringify(b));
          }
      }),
    );
  });
});
