// The stream/poll decision of a streamed target (pure, virtual time) and the one-observation-per-timestamp rule.
import { describe, expect, it } from "vitest";
import { ScaledPrice } from "../../src/domain/price.js";
import type { PairPrice, PriceComponent } from "../../src/domain/types.js";
import {
  checksRepeats,
  fedPrice,
  nextFedPrice,
  refeed,
  isRepeatedPrice,
  storePrice,
  type FedPrice,
} from "../../src/pipeline/price-dedup.js";
import {
  initialStreamHealth,
  stepStreamHealth,
  type StreamHealth,
  type StreamHealthInput,
} from "../../src/pipeline/stream-health.js";

const POLICY = { staleAfterMs: 3_000, recoverEvents: 3 };
const stream = (lastPriceAtMs: number): StreamHealth => ({ mode: "stream", lastPriceAtMs });
const poll = (lastPriceAtMs: number, freshInRow: number): StreamHealth => ({
  mode: "poll",
  lastPriceAtMs,
  freshInRow,
});
const price = (atMs: number): StreamHealthInput => ({ kind: "price", atMs });
const check = (atMs: number): StreamHealthInput => ({ kind: "check", atMs });
const down = (atMs: number): StreamHealthInput => ({ kind: "down", atMs });
const alive = (atMs: number): StreamHealthInput => ({ kind: "alive", atMs });

describe("stepStreamHealth", () => {
  it.each<[string, StreamHealth, StreamHealthInput, StreamHealth]>([
    ["a price keeps the stream trusted", stream(0), price(1_000), stream(1_000)],
    ["a check within the window changes nothing", stream(1_000), check(4_000), stream(1_000)],
    ["a check past the window falls back to polls", stream(1_000), check(4_001), poll(1_000, 0)],
    ["a down connection falls back at once", stream(1_000), down(1_500), poll(1_000, 0)],
    ["a live connection restarts the stale window", stream(1_000), alive(3_500), stream(3_500)],
    ["…so a check within the new window changes nothing", stream(3_500), check(6_000), stream(3_500)],
    [
      "a live connection is not a price: no count while polling",
      poll(1_000, 1),
      alive(1_500),
      poll(1_000, 1),
    ],
    ["a first price after a gap starts the count", poll(1_000, 0), price(9_000), poll(9_000, 1)],
    ["a fresh price adds to the count", poll(9_000, 1), price(10_000), poll(10_000, 2)],
    ["the last fresh price needed trusts the stream again", poll(10_000, 2), price(11_000), stream(11_000)],
    ["a gap restarts the count", poll(10_000, 2), price(13_001), poll(13_001, 1)],
    ["a stale check restarts the count", poll(10_000, 2), check(13_001), poll(10_000, 0)],
    ["a down connection restarts the count", poll(10_000, 2), down(10_500), poll(10_000, 0)],
    [
      "a stale check while polling with no count is the same state",
      poll(1_000, 0),
      check(9_000),
      poll(1_000, 0),
    ],
  ])("%s", (_, state, input, expected) => {
    expect(stepStreamHealth(state, input, POLICY)).toEqual(expected);
  });

  it("walks a stall and a recovery on a 1 s stream (virtual time)", () => {
    let state = initialStreamHealth(0);
    const modes: string[] = [];
    const feed = (input: StreamHealthInput): void => {
      state = stepStreamHealth(state, input, POLICY);
      modes.push(state.mode);
    };
    for (let t = 1_000; t <= 3_000; t += 1_000) feed(price(t)); // streaming
    for (let t = 3_500; t <= 7_500; t += 500) feed(check(t)); // stalled: stale after 6 000
    feed(price(20_000));
    feed(price(21_000));
    feed(check(21_500));
    feed(price(22_000));
    expect(modes.join(" ")).toBe(
      "stream stream stream stream stream stream stream stream stream poll poll poll poll poll poll stream",
    );
  });
});

const pairPrice = (timestampMs: number, components: number): PairPrice => ({
  pairId: "BTC/USD",
  price: new ScaledPrice(1n, 0),
  numSources: 3,
  timestampMs,
  components: Array.from({ length: components }, () => ({
    source: "S",
    price: new ScaledPrice(1n, 0),
    timestampMs,
  })),
});

/** The price a FedPrice literal carries where the test does not read it. */
const NO_PRICE = pairPrice(0, 0);

describe("isRepeatedPrice", () => {
  it.each<[string, FedPrice | null, PairPrice, boolean]>([
    ["nothing fed yet", null, pairPrice(1_000, 0), false],
    [
      "a newer price",
      { timestampMs: 1_000, withComponents: false, viaStream: true, price: NO_PRICE },
      pairPrice(2_000, 0),
      false,
    ],
    [
      "the same timestamp again (stream and poll)",
      { timestampMs: 1_000, withComponents: false, viaStream: true, price: NO_PRICE },
      pairPrice(1_000, 0),
      true,
    ],
    [
      "an older price",
      { timestampMs: 2_000, withComponents: true, viaStream: false, price: NO_PRICE },
      pairPrice(1_000, 3),
      true,
    ],
    [
      "the same timestamp adding components",
      { timestampMs: 1_000, withComponents: false, viaStream: true, price: NO_PRICE },
      pairPrice(1_000, 3),
      false,
    ],
    [
      "the same timestamp with components twice",
      { timestampMs: 1_000, withComponents: true, viaStream: false, price: NO_PRICE },
      pairPrice(1_000, 3),
      true,
    ],
  ])("%s → %s", (_, last, next, repeated) => {
    expect(isRepeatedPrice(last, next)).toBe(repeated);
  });

  it("records what was fed", () => {
    const price = pairPrice(5, 2);
    const fed = fedPrice(price, false);
    expect(fed).toEqual({
      timestampMs: 5,
      withComponents: true,
      viaStream: false,
      price,
    });
    expect(fed.price).toBe(price);
  });
});

describe("storePrice", () => {
  const component = (source: string, hex: string, timestampMs: number): PriceComponent => ({
    source,
    price: ScaledPrice.fromHex(hex, 8)!,
    timestampMs,
  });
  const decoded = (timestampMs: number, components: PriceComponent[]): PairPrice => ({
    pairId: "BTC/USD",
    price: ScaledPrice.fromHex(`0x${timestampMs.toString(16)}`, 8)!,
    numSources: components.length,
    timestampMs,
    components,
  });
  const plain = (price: PairPrice) => ({
    pairId: price.pairId,
    price: price.price.text,
    numSources: price.numSources,
    timestampMs: price.timestampMs,
    components: price.components.map((c) => [c.source, c.price.text, c.timestampMs]),
  });

  it("rewrites one store per target to each price, equal to what was decoded", () => {
    const first = decoded(1_000, [component("A", "0x10", 1_000), component("B", "0x20", 1_000)]);
    const store = storePrice(null, first);
    expect(store).not.toBe(first);
    expect(plain(store)).toEqual(plain(first));
    for (const next of [
      decoded(2_000, [
        component("A", "0x10", 1_000),
        component("B", "0x21", 2_000),
        component("C", "0x30", 2_000),
      ]),
      decoded(3_000, [component("C", "0x30", 2_000)]),
      decoded(4_000, []),
      decoded(5_000, [component("A", "0x11", 5_000)]),
    ]) {
      expect(storePrice(store, next)).toBe(store);
      expect(plain(store)).toEqual(plain(next));
    }
  });

  it("keeps the component objects, and the old price of a component whose source, time and hex are unchanged", () => {
    const store = storePrice(
      null,
      decoded(1_000, [component("A", "0x10", 1_000), component("B", "0x20", 1_000)]),
    );
    const [a, b] = store.components;
    const [oldA, oldB] = [a!.price, b!.price];
    const next = decoded(2_000, [component("A", "0x10", 1_000), component("B", "0x21", 2_000)]);
    storePrice(store, next);
    expect(store.components[0]).toBe(a);
    expect(store.components[1]).toBe(b);
    expect(a!.price).toBe(oldA);
    expect(b!.price).toBe(next.components[1]!.price);
    expect(oldB.text).toBe("0.00000032");
  });

  it("starts a new store over a price that is not one (a record from elsewhere, e.g. the replay's)", () => {
    const given = decoded(1_000, [component("A", "0x10", 1_000)]);
    const next = decoded(2_000, [component("A", "0x11", 2_000)]);
    const store = storePrice(given, next);
    expect(store).not.toBe(given);
    expect(plain(given)).toEqual(plain(decoded(1_000, [component("A", "0x10", 1_000)])));
    expect(plain(store)).toEqual(plain(next));
  });
});

describe("nextFedPrice", () => {
  const streamed: FedPrice = { timestampMs: 1_000, withComponents: false, viaStream: true, price: NO_PRICE };
  it("keeps a streamed price marked as streamed when a poll only adds its components", () => {
    expect(nextFedPrice(streamed, pairPrice(1_000, 3), false)).toMatchObject({
      timestampMs: 1_000,
      withComponents: true,
      viaStream: true,
    });
  });
  it("marks a newer polled price as polled, and a streamed one as streamed", () => {
    expect(nextFedPrice(streamed, pairPrice(2_000, 3), false).viaStream).toBe(false);
    expect(nextFedPrice(null, pairPrice(2_000, 0), true).viaStream).toBe(true);
    expect(nextFedPrice({ ...streamed, viaStream: false }, pairPrice(1_000, 3), false).viaStream).toBe(false);
  });
  it("so the first poll after a switch back still drops the price the stream and a component poll both gave", () => {
    const afterComponents = nextFedPrice(streamed, pairPrice(1_000, 3), false);
    expect(checksRepeats(false, afterComponents)).toBe(true);
    expect(isRepeatedPrice(afterComponents, pairPrice(1_000, 3))).toBe(true);
  });
});

describe("refeed", () => {
  it("records what nextFedPrice would, in the target's own record (one object per target, not per poll)", () => {
    const given: FedPrice = { timestampMs: 1_000, withComponents: false, viaStream: true, price: NO_PRICE };
    const first = refeed(given, pairPrice(1_000, 3), false);
    expect(first).not.toBe(given);
    expect(given).toEqual({ timestampMs: 1_000, withComponents: false, viaStream: true, price: NO_PRICE });
    expect({ ...first }).toEqual(nextFedPrice(given, pairPrice(1_000, 3), false));
    for (const [price, viaStream] of [
      [pairPrice(2_000, 0), true],
      [pairPrice(2_000, 3), false],
      [pairPrice(3_000, 2), false],
    ] as const) {
      const expected = nextFedPrice({ ...first }, price, viaStream);
      expect(refeed(first, price, viaStream)).toBe(first);
      expect({ ...first }).toEqual(expected);
    }
  });
});

describe("checksRepeats", () => {
  const fed = (viaStream: boolean): FedPrice => ({
    timestampMs: 1,
    withComponents: true,
    viaStream,
    price: NO_PRICE,
  });
  it.each<[string, boolean, FedPrice | null, boolean]>([
    ["a streamed target, nothing fed yet", true, null, true],
    ["a streamed target after a poll", true, fed(false), true],
    ["a polled target", false, fed(false), false],
    ["a polled target that has fed nothing", false, null, false],
    ["a polled target whose last price came from the stream (switched back)", false, fed(true), true],
  ])("%s → %s", (_, streamed, last, checks) => {
    expect(checksRepeats(streamed, last)).toBe(checks);
  });
});
