// The 16-bit-limb FNV-1a 64 used for fingerprints equals the BigInt reference (fingerprints are persisted).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fnv1a64Hex } from "../../src/domain/fingerprint.js";

/** The textbook FNV-1a 64-bit in BigInt arithmetic, to check the 16-bit-limb version against. */
function fnv1a64HexReference(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(text)) {
    hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * 0x100000001b3n);
  }
  return hash.toString(16).padStart(16, "0");
}

describe("fnv1a64Hex", () => {
  it("matches the published FNV-1a 64 test vectors", () => {
    expect(fnv1a64Hex("")).toBe("cbf29ce484222325");
    expect(fnv1a64Hex("a")).toBe("af63dc4c8601ec8c");
    expect(fnv1a64Hex("foobar")).toBe("85944171f73967e8");
  });

  it("equals the BigInt reference on any string, including non-ASCII and control characters", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => {
        expect(fnv1a64Hex(text)).toBe(fnv1a64HexReference(text));
      }),
      { numRuns: 2000 },
    );
  });
});
