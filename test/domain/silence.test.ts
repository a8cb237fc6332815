// Silence semantics as tables on the pure core: matchers, states, what mutes an alert, validation, text form, muting memory.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AlertPayload } from "../../src/domain/events.js";
import {
  formatMatchers,
  matchableLabels,
  matcherMatches,
  matcherOperator,
  muteTransition,
  nextSilenceChangeMs,
  parseMatcher,
  sameMatchers,
  silenceProblem,
  silenceState,
  silencingIds,
  type MuteMemory,
  type Silence,
  type SilenceMatcher,
  type SilenceState,
} from "../../src/domain/silence.js";
import { HOUR_MS, MINUTE_MS, T0, iso, matcher, silence } from "./helpers.js";

type Matchable = Pick<AlertPayload, "labels" | "rule" | "severity">;

const BTC: Matchable = {
  rule: "price_change",
  severity: "critical",
  labels: { pair: "BTC/USD", market: "offchain", window: "1min" },
};
const ETH: Matchable = { ...BTC, labels: { ...BTC.labels, pair: "ETH/USD" } };

describe("matcherMatches", () => {
  const labels = { pair: "BTC/USD", market: "offchain", empty: "" };
  it.each<[string, SilenceMatcher, boolean]>([
    ["= equal value", matcher("pair", "=", "BTC/USD"), true],
    ["= other value", matcher("pair", "=", "ETH/USD"), false],
    ["= is case-sensitive", matcher("pair", "=", "btc/usd"), false],
    ["= takes regex characters literally", matcher("pair", "=", "BTC/.*"), false],
    ['= "" holds for an absent label', matcher("network", "=", ""), true],
    ['= "" holds for an empty label', matcher("empty", "=", ""), true],
    ['= "x" fails for an absent label', matcher("network", "=", "x"), false],
    ["!= other value", matcher("pair", "!=", "ETH/USD"), true],
    ["!= equal value", matcher("pair", "!=", "BTC/USD"), false],
    ['!= "x" holds for an absent label', matcher("network", "!=", "x"), true],
    ['!= "" fails for an absent label', matcher("network", "!=", ""), false],
    ["=~ matches the whole value", matcher("pair", "=~", "BTC/.*"), true],
    ["=~ is anchored at the start", matcher("pair", "=~", "USD"), false],
    ["=~ is anchored at the end", matcher("pair", "=~", "BTC"), false],
    ["=~ anchors every alternative", matcher("pair", "=~", "BTC|ETH/USD"), false],
    ["=~ alternatives that cover the value", matcher("pair", "=~", "ETH/USD|BTC/USD"), true],
    ['=~ ".*" holds for an absent label', matcher("network", "=~", ".*"), true],
    ['=~ ".+" fails for an absent label', matcher("network", "=~", ".+"), false],
    ["!~ a value the regex misses", matcher("pair", "!~", "ETH/.*"), true],
    ["!~ a value the regex matches", matcher("pair", "!~", "BTC/.*"), false],
    ["!~ is anchored too", matcher("pair", "!~", "BTC"), true],
    ['!~ ".+" holds for an absent label', matcher("network", "!~", ".+"), true],
  ])("%s", (_name, m, expected) => {
    expect(matcherMatches(m, labels)).toBe(expected);
  });

  it("reads an astral character as one character (the u flag)", () => {
    expect(matcherMatches(matcher("pair", "=~", "."), { pair: "😀" })).toBe(true);
  });
});

describe("silenceState", () => {
  const s = { startsAt: iso(T0), endsAt: iso(T0 + HOUR_MS) };
  it.each<[string, number, SilenceState]>([
    ["before its start", T0 - 1, "pending"],
    ["at its start", T0, "active"],
    ["inside", T0 + MINUTE_MS, "active"],
    ["just before its end", T0 + HOUR_MS - 1, "active"],
    ["at its end (the range is half-open)", T0 + HOUR_MS, "expired"],
    ["after its end", T0 + 2 * HOUR_MS, "expired"],
  ])("%s", (_name, nowMs, expected) => {
    expect(silenceState(s, nowMs)).toBe(expected);
  });

  it("a silence ending where it starts is never active", () => {
    const empty = { startsAt: iso(T0), endsAt: iso(T0) };
    expect([T0 - 1, T0, T0 + 1].map((at) => silenceState(empty, at))).toEqual([
      "pending",
      "expired",
      "expired",
    ]);
  });
});

describe("matchableLabels", () => {
  it.each<[string, Matchable, Record<string, string>]>([
    [
      "labels plus rule, severity and alertname",
      BTC,
      { ...BTC.labels, rule: "price_change", severity: "critical", alertname: "price_change" },
    ],
    [
      "rule and severity are the alert's, whatever its labels say",
      { ...BTC, labels: { pair: "BTC/USD", rule: "x", severity: "info" } },
      { pair: "BTC/USD", rule: "price_change", severity: "critical", alertname: "price_change" },
    ],
    [
      "an alertname label wins over the rule",
      { ...BTC, labels: { alertname: "custom" } },
      { alertname: "custom", rule: "price_change", severity: "critical" },
    ],
  ])("%s", (_name, alert, expected) => {
    expect(matchableLabels(alert)).toEqual(expected);
  });
});

describe("silencingIds", () => {
  const now = T0;
  const active = (id: string, matchers?: readonly SilenceMatcher[]): Silence =>
    silence(id, now - HOUR_MS, now + HOUR_MS, matchers);
  it.each<[string, readonly Silence[], Matchable, readonly string[]]>([
    ["no silences", [], BTC, []],
    ["an active matching silence", [active("s1")], BTC, ["s1"]],
    ["an active silence of another pair", [active("s1")], ETH, []],
    ["a pending matching silence", [silence("s1", now + 1, now + HOUR_MS)], BTC, []],
    ["an expired matching silence", [silence("s1", now - HOUR_MS, now)], BTC, []],
    ["several, sorted by id", [active("s3"), active("s1"), active("s2")], BTC, ["s1", "s2", "s3"]],
    [
      "only the matching and active ones",
      [
        active("b"),
        silence("a", now + 1, now + 2),
        active("c", [matcher("pair", "=", "ETH/USD")]),
        active("d"),
      ],
      BTC,
      ["b", "d"],
    ],
    ["a matcher on the rule", [active("s1", [matcher("rule", "=", "price_change")])], BTC, ["s1"]],
    ["a matcher on alertname", [active("s1", [matcher("alertname", "=~", "price_.*")])], BTC, ["s1"]],
    ["a matcher on severity", [active("s1", [matcher("severity", "!=", "critical")])], BTC, []],
    [
      "every matcher must hold",
      [active("s1", [matcher("pair", "=", "BTC/USD"), matcher("window", "=", "5min")])],
      BTC,
      [],
    ],
  ])("%s", (_name, silences, alert, expected) => {
    expect(silencingIds(silences, alert, now)).toEqual(expected);
  });
});

describe("nextSilenceChangeMs", () => {
  it.each<[string, readonly Silence[], number | null]>([
    ["no silences", [], null],
    ["a pending one: its start", [silence("a", T0 + 5, T0 + 10)], T0 + 5],
    ["an active one: its end", [silence("a", T0 - 5, T0 + 10)], T0 + 10],
    ["one starting now: its end", [silence("a", T0, T0 + 10)], T0 + 10],
    ["an expired one: nothing", [silence("a", T0 - 10, T0)], null],
    ["the earliest of all", [silence("a", T0 - 5, T0 + 30), silence("b", T0 + 20, T0 + 40)], T0 + 20],
  ])("%s", (_name, silences, expected) => {
    expect(nextSilenceChangeMs(silences, T0)).toBe(expected);
  });
});

describe("silenceProblem", () => {
  const times = { startsAt: iso(T0), endsAt: iso(T0 + HOUR_MS) };
  const pair = matcher("pair", "=", "BTC/USD");
  it.each<[string, Pick<Silence, "matchers" | "startsAt" | "endsAt">, string | null]>([
    ["a valid silence", { ...times, matchers: [pair] }, null],
    ["a zero-length one", { matchers: [pair], startsAt: iso(T0), endsAt: iso(T0) }, null],
    ["no matchers", { ...times, matchers: [] }, "matchers: "],
    ["an empty name", { ...times, matchers: [pair, matcher("", "=", "x")] }, "matchers[1].name: "],
    ["a bad regex", { ...times, matchers: [pair, matcher("pair", "=~", "(")] }, "matchers[1].value: "],
    ["a bad regex under !~", { ...times, matchers: [matcher("pair", "!~", "[")] }, "matchers[0].value: "],
    ["regex syntax under = is fine", { ...times, matchers: [matcher("pair", "=", "(")] }, null],
    ['only =~ ".*"', { ...times, matchers: [matcher("pair", "=~", ".*")] }, "matchers: "],
    ['only = ""', { ...times, matchers: [matcher("pair", "=", "")] }, "matchers: "],
    ['only != "x"', { ...times, matchers: [matcher("pair", "!=", "x")] }, "matchers: "],
    ['only !~ "BTC"', { ...times, matchers: [matcher("pair", "!~", "BTC")] }, "matchers: "],
    [
      "matchers of the empty label beside one that is not",
      { ...times, matchers: [matcher("network", "=", ""), matcher("pair", "!~", ".*USD"), pair] },
      null,
    ],
    [
      "a start that is not a time",
      { matchers: [pair], startsAt: "soon", endsAt: times.endsAt },
      "startsAt: ",
    ],
    [
      "an end that is not a time",
      { matchers: [pair], startsAt: times.startsAt, endsAt: "later" },
      "endsAt: ",
    ],
    [
      "an end before the start",
      { matchers: [pair], startsAt: times.endsAt, endsAt: times.startsAt },
      "endsAt: must not be before startsAt",
    ],
  ])("%s", (_name, candidate, expected) => {
    const problem = silenceProblem(candidate);
    if (expected === null) expect(problem).toBeNull();
    else expect(problem?.startsWith(expected)).toBe(true);
  });
});

describe("matcher text", () => {
  it.each<[SilenceMatcher, "=" | "!=" | "=~" | "!~"]>([
    [matcher("a", "=", "x"), "="],
    [matcher("a", "!=", "x"), "!="],
    [matcher("a", "=~", "x"), "=~"],
    [matcher("a", "!~", "x"), "!~"],
  ])("matcherOperator(%o) is %s", (m, operator) => {
    expect(matcherOperator(m)).toBe(operator);
  });

  it.each<[readonly SilenceMatcher[], string]>([
    [[], "{}"],
    [[matcher("pair", "=", "BTC/USD")], '{pair="BTC/USD"}'],
    [
      [matcher("pair", "=", "BTC/USD"), matcher("rule", "=~", "price_.*"), matcher("severity", "!=", "info")],
      '{pair="BTC/USD", rule=~"price_.*", severity!="info"}',
    ],
    [[matcher("summary", "!~", 'say "hi"\\n')], '{summary!~"say \\"hi\\"\\\\n"}'],
  ])("formatMatchers(%j) is %s", (matchers, text) => {
    expect(formatMatchers(matchers)).toBe(text);
  });

  it.each<[string, SilenceMatcher]>([
    ["pair=BTC/USD", matcher("pair", "=", "BTC/USD")],
    ["rule!=stale_price", matcher("rule", "!=", "stale_price")],
    ['pair=~"BTC/.*"', matcher("pair", "=~", "BTC/.*")],
    ["severity!~info", matcher("severity", "!~", "info")],
    ["  pair  =  BTC/USD  ", matcher("pair", "=", "BTC/USD")],
    ['comment="a \\"quoted\\" word"', matcher("comment", "=", 'a "quoted" word')],
    ['pair=" padded "', matcher("pair", "=", " padded ")],
    ["pair=", matcher("pair", "=", "")],
    ['pair=""', matcher("pair", "=", "")],
    ["a==b", matcher("a", "=", "=b")],
    ["a=!b", matcher("a", "=", "!b")],
    ['a="~b"', matcher("a", "=", "~b")],
    ["_x1=~a|b", matcher("_x1", "=~", "a|b")],
  ])("parseMatcher(%s)", (text, expected) => {
    expect(parseMatcher(text)).toEqual(expected);
  });

  it.each<[string, string]>([
    ["", "is not a matcher"],
    ["pair", "is not a matcher"],
    ["=x", "is not a matcher"],
    ["1pair=x", "is not a matcher"],
    ["pa-ir=x", "is not a matcher"],
    ['pair="BTC', "not a valid JSON string"],
    ['pair="BTC" ETH', "not a valid JSON string"],
    ["pair=~(", "not a valid regular expression"],
    ['pair!~"["', "not a valid regular expression"],
  ])("parseMatcher(%j) is refused: %s", (text, reason) => {
    const parsed = parseMatcher(text);
    expect(parsed).toHaveProperty("problem");
    expect((parsed as { problem: string }).problem).toContain(reason);
  });
});

describe("muteTransition", () => {
  const notified: MuteMemory = { silencedBy: [], notified: true };
  const mutedOnly: MuteMemory = { silencedBy: ["s1"], notified: false };
  const notifiedThenMuted: MuteMemory = { silencedBy: ["s1"], notified: true };
  it.each<
    [
      string,
      MuteMemory | undefined,
      "firing" | "resolved",
      readonly string[],
      readonly string[],
      MuteMemory | undefined,
    ]
  >([
    ["first firing, unmuted", undefined, "firing", [], [], notified],
    ["first firing, muted", undefined, "firing", ["s1"], ["s1"], mutedOnly],
    ["notified, then muted", notified, "firing", ["s1"], ["s1"], notifiedThenMuted],
    ["muted, then unmuted: notified now", mutedOnly, "firing", [], [], notified],
    [
      "muted by another silence",
      mutedOnly,
      "firing",
      ["s2"],
      ["s2"],
      { silencedBy: ["s2"], notified: false },
    ],
    ["resolve of one never notified: muted", mutedOnly, "resolved", [], ["s1"], undefined],
    ["resolve keeps the firing's silences", mutedOnly, "resolved", ["s2"], ["s1"], undefined],
    ["resolve of one notified then muted: heard", notifiedThenMuted, "resolved", [], [], undefined],
    ["resolve of one notified: heard", notified, "resolved", ["s1"], [], undefined],
    ["resolve of one never seen: heard", undefined, "resolved", ["s1"], [], undefined],
  ])("%s", (_name, previous, status, activeIds, silencedBy, memory) => {
    expect(muteTransition(previous, status, activeIds)).toEqual({ silencedBy, memory });
  });
});

describe("sameMatchers", () => {
  const pair = matcher("pair", "=", "BTC/USD");
  const rule = matcher("rule", "=~", "price_.*");
  it.each<[string, readonly SilenceMatcher[], readonly SilenceMatcher[], boolean]>([
    ["the same list", [pair, rule], [pair, rule], true],
    ["another order", [pair, rule], [rule, pair], true],
    ["one more", [pair], [pair, rule], false],
    ["a negated one", [pair], [matcher("pair", "!=", "BTC/USD")], false],
    ["a regex one", [pair], [matcher("pair", "=~", "BTC/USD")], false],
    ["another value", [pair], [matcher("pair", "=", "ETH/USD")], false],
    ["a duplicate instead of another", [pair, pair], [pair, rule], false],
  ])("%s: %s", (_name, a, b, expected) => {
    expect(sameMatchers(a, b)).toBe(expected);
    expect(sameMatchers(b, a)).toBe(expected);
  });
});

/** Label names amtool accepts; values from any code point, with the characters the text form must escape. */
const labelName = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,15}$/);
const anyValue = fc.oneof(
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.string({
    unit: fc.constantFrom('"', "\\", "=", "~", "!", " ", "\t", "\n", "\r", "\u2028", "\u2029", "\ud800", "a"),
    maxLength: 12,
  }),
);
const compiles = (value: string): boolean => {
  try {
    new RegExp(`^(?:${value})$`, "u");
    return true;
  } catch {
    return false;
  }
};
const anyMatcher: fc.Arbitrary<SilenceMatcher> = fc.oneof(
  fc.record({ name: labelName, value: anyValue, isRegex: fc.constant(false), isEqual: fc.boolean() }),
  fc.record({
    name: labelName,
    value: anyValue.filter(compiles),
    isRegex: fc.constant(true),
    isEqual: fc.boolean(),
  }),
);

describe("properties", () => {
  it("parseMatcher reads back what formatMatchers writes", () => {
    fc.assert(
      fc.property(anyMatcher, (m) => {
        const text = formatMatchers([m]).slice(1, -1);
        expect(parseMatcher(text)).toEqual(m);
      }),
      { numRuns: 2_000 },
    );
  });

  // An oracle written apart from the code: each regex of the domain with the values it fully matches.
  const REGEXES: Readonly<Record<string, (value: string) => boolean>> = {
    "BTC/.*": (v) => v.startsWith("BTC/"),
    ".*USD": (v) => v.endsWith("USD"),
    "BTC|ETH/USD": (v) => v === "BTC" || v === "ETH/USD",
    "price_.*|stale_price": (v) => v.startsWith("price_") || v === "stale_price",
    ".+": (v) => v !== "",
  };
  const PLAIN = ["BTC/USD", "ETH/USD", "price_change", "stale_price", "critical", "offchain", ""];
  const NAMES = ["pair", "market", "rule", "severity", "alertname", "network"];
  const domainMatcher: fc.Arbitrary<SilenceMatcher> = fc.oneof(
    fc.record({
      name: fc.constantFrom(...NAMES),
      value: fc.constantFrom(...PLAIN),
      isRegex: fc.constant(false),
      isEqual: fc.boolean(),
    }),
    fc.record({
      name: fc.constantFrom(...NAMES),
      value: fc.constantFrom(...Object.keys(REGEXES)),
      isRegex: fc.constant(true),
      isEqual: fc.boolean(),
    }),
  );
  const window = fc
    .tuple(fc.integer({ min: -3, max: 3 }), fc.integer({ min: 0, max: 4 }))
    .map(([startHours, hours]) => ({
      startsAtMs: T0 + startHours * HOUR_MS,
      endsAtMs: T0 + (startHours + hours) * HOUR_MS,
    }));
  const silences = fc
    .array(fc.tuple(window, fc.array(domainMatcher, { minLength: 1, maxLength: 3 })), { maxLength: 8 })
    .map((entries) =>
      entries.map(([{ startsAtMs, endsAtMs }, matchers], index) =>
        silence(`s${(index * 7) % 10}${index}`, startsAtMs, endsAtMs, matchers),
      ),
    );
  const alert: fc.Arbitrary<Matchable> = fc.record({
    rule: fc.constantFrom("price_change", "stale_price"),
    severity: fc.constantFrom("info", "warning", "critical"),
    labels: fc.record(
      { pair: fc.constantFrom("BTC/USD", "ETH/USD", "BTC"), market: fc.constantFrom("offchain", "") },
      { requiredKeys: [] },
    ),
  });
  const nowMs = fc.integer({ min: -4 * 60, max: 4 * 60 }).map((minutes) => T0 + minutes * MINUTE_MS);

  it("silencingIds are the sorted ids of the silences active now whose every matcher holds", () => {
    fc.assert(
      fc.property(silences, alert, nowMs, (all, a, now) => {
        const labels: Record<string, string> = {
          ...a.labels,
          rule: a.rule,
          severity: a.severity,
          alertname: a.rule,
        };
        const holds = (m: SilenceMatcher): boolean => {
          const value = labels[m.name] ?? "";
          const same = m.isRegex ? REGEXES[m.value]!(value) : value === m.value;
          return same === m.isEqual;
        };
        const expected = all
          .filter((s) => Date.parse(s.startsAt) <= now && now < Date.parse(s.endsAt))
          .filter((s) => s.matchers.every(holds))
          .map((s) => s.id)
          .sort();
        expect(silencingIds(all, a, now)).toEqual(expected);
        // pending and expired silences never mute, whatever they match
        const notActive = all.filter((s) => silenceState(s, now) !== "active");
        expect(silencingIds(notActive, a, now)).toEqual([]);
      }),
      { numRuns: 1_000 },
    );
  });

  it("a resolve is muted exactly when none of its firing's announcements went out unmuted", () => {
    const ids = fc.constantFrom<readonly string[]>([], ["s1"], ["s2"], ["s1", "s2"]);
    fc.assert(
      fc.property(fc.array(ids, { minLength: 1, maxLength: 8 }), ids, (announcements, atResolve) => {
        let memory: MuteMemory | undefined;
        for (const activeIds of announcements) {
          const step = muteTransition(memory, "firing", activeIds);
          expect(step.silencedBy).toEqual(activeIds);
          memory = step.memory;
        }
        const resolve = muteTransition(memory, "resolved", atResolve);
        const everMuted = announcements.every((activeIds) => activeIds.length > 0);
        expect(resolve.silencedBy).toEqual(everMuted ? announcements.at(-1) : []);
        expect(resolve.memory).toBeUndefined();
      }),
    );
  });
});
