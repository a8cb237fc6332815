// The member lists of the cause rules' summaries: listing the first members in text order without sorting them all
// says exactly what sorting them all and listing the first said.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { listMembers, listMembersSorted } from "../../src/domain/rules/cause.js";

/** What upstream_down listed before: every id sorted, then the first `max`. */
const sortedThenListed = (members: readonly string[], max?: number): string =>
  listMembers([...members].sort(), max);

describe("listMembersSorted", () => {
  it.each([
    { members: [], expected: "" },
    { members: ["b", "a"], expected: "a, b" },
    { members: ["b", "a", "a"], max: 2, expected: "a, a and 1 more" },
    { members: ["c", "b", "a", "d"], max: 0, expected: " and 4 more" },
    { members: ["Z", "a", "É", "10", "9"], expected: "10, 9, Z, a, É" },
  ])("lists $members (max $max) as $expected", ({ members, max, expected }) => {
    expect(listMembersSorted(members, max)).toBe(expected);
    expect(sortedThenListed(members, max)).toBe(expected);
  });

  it("equals a full sort then listMembers, for any members and any max", () => {
    // small alphabets make duplicates and shared prefixes common; full unicode covers surrogate pairs
    const member = fc.oneof(
      fc.string({ unit: fc.constantFrom("a", "b", "B", "1", "é"), maxLength: 4 }),
      fc.string({ unit: "binary" }),
    );
    fc.assert(
      fc.property(
        fc.array(member, { maxLength: 60 }),
        fc.option(fc.integer({ min: 0, max: 15 }), { nil: undefined }),
        (members, max) => {
          expect(listMembersSorted(members, max)).toBe(sortedThenListed(members, max));
        },
      ),
    );
  });

  it("equals a full sort then listMembers on a cluster's worth of target ids in any order", () => {
    const ids = Array.from({ length: 1_500 }, (_, i) => `offchain:P${i}/USD:spot:median:1min`);
    fc.assert(
      fc.property(fc.shuffledSubarray(ids, { minLength: 0 }), (members) => {
        expect(listMembersSorted(members)).toBe(sortedThenListed(members));
      }),
      { numRuns: 50 },
    );
  });
});
