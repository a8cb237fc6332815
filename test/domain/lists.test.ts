// sameStrings: the same strings in the same order, nothing looser.
import { describe, expect, it } from "vitest";
import { sameStrings } from "../../src/domain/lists.js";

describe("sameStrings", () => {
  it.each<[readonly string[], readonly string[], boolean]>([
    [[], [], true],
    [["a"], ["a"], true],
    [["a", "b"], ["a", "b"], true],
    [["a"], [], false],
    [["a"], ["b"], false],
    [["a", "b"], ["a"], false],
    [["a", "b"], ["b", "a"], false],
    [["a", "a"], ["a"], false],
  ])("sameStrings(%j, %j) is %s", (a, b, expected) => {
    expect(sameStrings(a, b)).toBe(expected);
  });
});
