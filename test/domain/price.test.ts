// ScaledPrice.fromHex: accepts exactly "0x" + 1..64 hex digits, and a lazily built price equals the eager one
// (raw, the approx double bit for bit, text), on both sides of the 26-digit lazy limit.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ScaledPrice } from "../../src/domain/price.js";

/** Hex digits of `raw`, left-padded to `width` with zeros, each letter upper- or lower-cased by `upper`. */
function hexText(raw: bigint, width: number, upper: readonly boolean[]): string {
  const digits = raw.toString(16).padStart(width, "0");
  return `0x${[...digits].map((c, i) => (upper[i % Math.max(1, upper.length)] ? c.toUpperCase() : c)).join("")}`;
}

const raw = fc.oneof(
  fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  fc.bigInt({ min: 1n << 64n, max: (1n << 104n) - 1n }), // up to 26 digits: lazy
  fc.bigInt({ min: 1n << 104n, max: (1n << 256n) - 1n }), // 27..64 digits: eager
);

describe("ScaledPrice.fromHex", () => {
  it("equals the price BigInt parses: raw, approx (same double) and text", () => {
    fc.assert(
      fc.property(
        raw,
        fc.integer({ min: 0, max: 30 }),
        fc.array(fc.boolean(), { maxLength: 8 }),
        fc.integer({ min: 0, max: 77 }),
        (value, padding, upper, decimals) => {
          const width = Math.min(64, value.toString(16).length + padding);
          const text = hexText(value, width, upper);
          const eager = new ScaledPrice(value, decimals);
          // approx before raw: the lazy double must not depend on the bigint having been built
          const approx = ScaledPrice.fromHex(text, decimals)?.approx;
          expect(Object.is(approx, eager.approx)).toBe(true);
          const lazy = ScaledPrice.fromHex(text, decimals);
          expect(lazy?.raw).toBe(value);
          expect(lazy?.text).toBe(eager.text);
          expect(lazy?.decimals).toBe(decimals);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("reads the largest lazy and the smallest eager digit counts exactly", () => {
    // 0x80000000000004_0000000000001 (27 digits): read as 14 + 13 digits, the 56-bit upper half would be
    // rounded to even first and the sum rounded down, while the integer itself rounds up
    const doubleRounding = "0x800000000000040000000000001";
    for (const text of [
      `0x${"f".repeat(26)}`,
      `0x1${"0".repeat(26)}`,
      doubleRounding,
      `0x${"F".repeat(64)}`,
      "0x0",
      "0x1",
    ]) {
      const price = ScaledPrice.fromHex(text, 18);
      expect(price?.raw).toBe(BigInt(text));
      expect(price?.approx).toBe(new ScaledPrice(BigInt(text), 18).approx);
    }
  });

  it("rejects everything but 0x and 1 to 64 hex digits", () => {
    const rejected = [
      "",
      "0",
      "0x",
      "0X1f",
      "1f",
      "x1f",
      " 0x1f",
      "0x1f ",
      "0x1f\n",
      "0x1 2",
      "0x-1",
      "0x+1",
      "0x1.5",
      "0x1g",
      "0xnothex",
      "0b101",
      "0o17",
      "0x\u0661", // a non-ASCII digit
      "0x１", // full-width 1
      `0x${"1".repeat(65)}`,
      `0x${"1".repeat(30)}z`,
    ];
    for (const text of rejected) expect(ScaledPrice.fromHex(text, 18), JSON.stringify(text)).toBeNull();
  });

  it("rejects any text BigInt would not read as a bare hex integer", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 70, unit: "binary" }), (tail) => {
        const text = `0x${tail}`;
        const valid = tail.length >= 1 && tail.length <= 64 && /^[0-9a-fA-F]+$/.test(tail);
        const price = ScaledPrice.fromHex(text, 0);
        expect(price === null).toBe(!valid);
        if (valid) expect(price?.raw).toBe(BigInt(text));
      }),
      { numRuns: 300 },
    );
  });
});

describe("ScaledPrice.isPositive", () => {
  it("agrees with raw > 0n for hex text (before and after the bigint is built) and for bigints", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: (1n << 120n) - 1n }),
        fc.integer({ min: 0, max: 400 }),
        (raw, decimals) => {
          const hex = ScaledPrice.fromHex(`0x${raw.toString(16)}`, decimals)!;
          expect(hex.isPositive()).toBe(raw > 0n);
          void hex.raw;
          expect(hex.isPositive()).toBe(raw > 0n);
          expect(new ScaledPrice(-raw, decimals).isPositive()).toBe(false);
          expect(new ScaledPrice(raw, decimals).isPositive()).toBe(raw > 0n);
        },
      ),
    );
    expect(ScaledPrice.fromHex("0x0000", 18)!.isPositive()).toBe(false);
    expect(ScaledPrice.fromHex("0x0001", 400)!.isPositive()).toBe(true);
  });
});

describe("ScaledPrice.sameHexAs", () => {
  it("says yes only for the same hex text at the same scale, while neither has built its bigint", () => {
    const a = ScaledPrice.fromHex("0x1f", 8)!;
    expect(a.sameHexAs(ScaledPrice.fromHex("0x1f", 8)!)).toBe(true);
    expect(a.sameHexAs(ScaledPrice.fromHex("0x1f", 6)!)).toBe(false);
    expect(a.sameHexAs(ScaledPrice.fromHex("0x1F", 8)!)).toBe(false);
    expect(a.sameHexAs(new ScaledPrice(31n, 8))).toBe(false);
    const built = ScaledPrice.fromHex("0x1f", 8)!;
    void built.raw;
    expect(a.sameHexAs(built)).toBe(false);
  });
});

describe("ScaledPrice.writeWords", () => {
  it("writes 0 ≤ raw < 2^128 as four words that fromWords reads back exactly, from hex text and from bigints", () => {
    fc.assert(
      fc.property(
        raw,
        fc.integer({ min: 0, max: 30 }),
        fc.array(fc.boolean(), { maxLength: 8 }),
        fc.integer({ min: 0, max: 77 }),
        (value, padding, upper, decimals) => {
          const text = hexText(value, Math.min(64, value.toString(16).length + padding), upper);
          const fits = value < 1n << 128n;
          for (const price of [ScaledPrice.fromHex(text, decimals)!, new ScaledPrice(value, decimals)]) {
            const words = new Uint32Array(6).fill(7);
            expect(price.writeWords(words, 1)).toBe(fits);
            expect(words[0]).toBe(7);
            expect(words[5]).toBe(7);
            if (!fits) continue;
            const back = ScaledPrice.fromWords(words, 1, decimals);
            expect(back.raw).toBe(value);
            expect(back.decimals).toBe(decimals);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("reads back every value next to the bounds of fromWords' two-bigint path (2^85) and of each word", () => {
    const bounds = [0n, 1n << 32n, 1n << 53n, 1n << 64n, 1n << 85n, 1n << 96n, (1n << 128n) - 1n];
    for (const bound of bounds)
      for (const value of [bound - 1n, bound, bound + 1n, bound + (1n << 32n) + 1n]) {
        if (value < 0n || value >= 1n << 128n) continue;
        const words = new Uint32Array(4);
        expect(new ScaledPrice(value, 18).writeWords(words, 0)).toBe(true);
        expect(ScaledPrice.fromWords(words, 0, 18).raw).toBe(value);
      }
  });

  it("refuses negative prices and reads hex text without building its bigint", () => {
    expect(new ScaledPrice(-1n, 2).writeWords(new Uint32Array(4), 0)).toBe(false);
    const price = ScaledPrice.fromHex(`0x${"f".repeat(26)}`, 18)!;
    const words = new Uint32Array(4);
    expect(price.writeWords(words, 0)).toBe(true);
    expect([...words]).toEqual([0xffffffff, 0xffffffff, 0xffffffff, 0xff]);
    // sameHexAs answers yes only while neither price built its bigint
    expect(price.sameHexAs(ScaledPrice.fromHex(`0x${"f".repeat(26)}`, 18)!)).toBe(true);
  });
});
