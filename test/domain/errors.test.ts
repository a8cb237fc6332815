// errorCode: the one way to read the `code` of a thrown value (errno, undici, PmError), and nothing else.
import { describe, expect, it } from "vitest";
import { errorCode, PmError } from "../../src/domain/errors.js";

describe("errorCode", () => {
  it.each([
    ["an errno error", Object.assign(new Error("no such file"), { code: "ENOENT" }), "ENOENT"],
    ["a PmError", new PmError("PM_ERR_STATE", "bad"), "PM_ERR_STATE"],
    ["a plain object with a code", { code: "UND_ERR_SOCKET" }, "UND_ERR_SOCKET"],
    ["an error without a code", new Error("boom"), undefined],
    ["a numeric code", { code: 42 }, undefined],
    ["a string", "ENOENT", undefined],
    ["null", null, undefined],
    ["undefined", undefined, undefined],
  ])("%s → %s", (_name, error, expected) => {
    expect(errorCode(error)).toBe(expected);
  });
});
