// The silences file: written atomically and privately, read back entry by entry, a damaged file or entry set aside.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PRIVATE_FILE_MODE, quarantinePath } from "../../src/state/atomic-file.js";
import { readSilences, silenceFilePath, writeSilences } from "../../src/state/silence-file.js";
import { MAX_UPDATED_AT_AHEAD_MS } from "../../src/domain/silence-set.js";
import { HOUR_MS, T0, iso, matcher, silence } from "../domain/helpers.js";
import { captureLogger } from "../sinks/chatops/helpers.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function fileIn(): string {
  const dir = mkdtempSync(join(tmpdir(), "pm-silence-file-"));
  dirs.push(dir);
  return silenceFilePath(dir);
}

const a = silence("a", T0, T0 + HOUR_MS);
const b = silence("b", T0 - 2 * HOUR_MS, T0 - HOUR_MS, [
  matcher("rule", "=~", "price_.*"),
  matcher("severity", "!=", "info"),
  matcher("network", "!~", "test.*"),
]);

/** How a daemon running alone reads the file (cluster mode keeps a far-future updatedAt: ../cluster). */
const ALONE = { clampFutureUpdatedAt: true };

describe("silences file", () => {
  it("lives in state.dir as silences.json", () => {
    expect(silenceFilePath("/var/lib/pm")).toBe(join("/var/lib/pm", "silences.json"));
  });

  it("reads back what it wrote, expired silences included, in a private file", () => {
    const path = fileIn();
    const log = captureLogger();
    writeSilences(path, [a, b]);
    expect(readSilences(path, T0, log.logger, ALONE).silences).toEqual([a, b]);
    expect(statSync(path).mode & 0o777).toBe(PRIVATE_FILE_MODE);
    expect(JSON.parse(readFileSync(path, "utf8"))).toMatchObject({ version: 1 });
    writeSilences(path, [b]);
    expect(readSilences(path, T0, log.logger, ALONE).silences).toEqual([b]);
    expect(log.lines).toEqual([]);
  });

  it("alone: sets an updatedAt over 5 min ahead of the clock to now (logged, counted), keeping the silence and the others", () => {
    const path = fileIn();
    const log = captureLogger();
    const ahead = { ...a, updatedAt: iso(T0 + MAX_UPDATED_AT_AHEAD_MS + 1) };
    const near = { ...b, updatedAt: iso(T0 + MAX_UPDATED_AT_AHEAD_MS) };
    writeSilences(path, [ahead, near]);
    const read = readSilences(path, T0, log.logger, ALONE);
    expect(read.silences).toEqual([{ ...a, updatedAt: iso(T0) }, near]);
    expect(read.clampedCount).toBe(1);
    expect(log.lines).toEqual([
      expect.objectContaining({ level: 50, id: "a", updatedAt: ahead.updatedAt, setTo: iso(T0) }),
    ]);
  });

  it("in cluster mode: keeps an updatedAt over 5 min ahead of the clock as it is (a warning), counting nothing", () => {
    const path = fileIn();
    const log = captureLogger();
    const ahead = { ...a, updatedAt: iso(T0 + MAX_UPDATED_AT_AHEAD_MS + 1) };
    writeSilences(path, [ahead, b]);
    const read = readSilences(path, T0, log.logger, { clampFutureUpdatedAt: false });
    expect(read.silences).toEqual([ahead, b]);
    expect(read.clampedCount).toBe(0);
    expect(log.lines).toEqual([
      expect.objectContaining({
        level: 40,
        id: "a",
        updatedAt: ahead.updatedAt,
        maxAheadMs: MAX_UPDATED_AT_AHEAD_MS,
      }),
    ]);
  });

  it("reads nothing, and logs nothing, when there is no file", () => {
    const log = captureLogger();
    expect(readSilences(fileIn(), T0, log.logger, ALONE).silences).toEqual([]);
    expect(log.lines).toEqual([]);
  });

  it.each<[string, string, string]>([
    ["not JSON", '{"version":1,"silences":[', "silences file unreadable: moved aside"],
    ["empty", "", "silences file unreadable: moved aside"],
    [
      "another version",
      JSON.stringify({ version: 2, silences: [a] }),
      "silences file has an unknown format: moved aside",
    ],
    ["a bare list", JSON.stringify([a]), "silences file has an unknown format: moved aside"],
    [
      "silences not a list",
      JSON.stringify({ version: 1, silences: {} }),
      "silences file has an unknown format: moved aside",
    ],
  ])("a file %s is moved aside and read as none", (_name, text, message) => {
    const path = fileIn();
    const log = captureLogger();
    writeFileSync(path, text);
    expect(readSilences(path, T0, log.logger, ALONE).silences).toEqual([]);
    const aside = quarantinePath(path, T0);
    expect(existsSync(path)).toBe(false);
    expect(readFileSync(aside, "utf8")).toBe(text);
    expect(log.lines).toEqual([expect.objectContaining({ level: 50, msg: message, movedTo: aside })]);
    // the next write starts a fresh file beside the one set aside
    writeSilences(path, [a]);
    expect(readSilences(path, T0, log.logger, ALONE).silences).toEqual([a]);
  });

  it.each<[string, unknown]>([
    ["no matchers", { ...a, matchers: [] }],
    ["a matcher with no name", { ...a, matchers: [{ name: "", value: "x", isRegex: false, isEqual: true }] }],
    ["a bad regex", { ...a, matchers: [matcher("pair", "=~", "(")] }],
    ["a matcher matching every alert", { ...a, matchers: [matcher("pair", "=~", ".*")] }],
    ["an end before its start", { ...a, startsAt: b.endsAt, endsAt: b.startsAt }],
    ["a time that is not ISO", { ...a, startsAt: "yesterday" }],
    ["no id", { ...a, id: undefined }],
    ["a number for a comment", { ...a, comment: 7 }],
    ["not an object", "a silence"],
  ])("drops an entry with %s, logs its index and keeps the rest", (_name, bad) => {
    const path = fileIn();
    const log = captureLogger();
    writeFileSync(path, JSON.stringify({ version: 1, silences: [a, bad, b] }));
    expect(readSilences(path, T0, log.logger, ALONE).silences).toEqual([a, b]);
    expect(existsSync(path)).toBe(true);
    expect(log.lines).toEqual([
      expect.objectContaining({
        level: 50,
        msg: "silences file: dropped an invalid silence",
        index: 1,
        reason: expect.any(String) as unknown,
      }),
    ]);
  });

  it("reads a matcher without isEqual as an equality (Alertmanager's default)", () => {
    const path = fileIn();
    const { isEqual: _omitted, ...bare } = matcher("pair", "=", "BTC/USD");
    writeFileSync(path, JSON.stringify({ version: 1, silences: [{ ...a, matchers: [bare] }] }));
    expect(readSilences(path, T0, captureLogger().logger, ALONE).silences).toEqual([a]);
  });

  it("keeps the states of the last check; a file without them (or with damaged ones) has none", () => {
    const path = fileIn();
    const log = captureLogger();
    writeSilences(
      path,
      [a, b],
      new Map([
        ["a", "active"],
        ["b", "expired"],
      ]),
    );
    expect(readSilences(path, T0, log.logger, ALONE).checkedStates).toEqual(
      new Map([
        ["a", "active"],
        ["b", "expired"],
      ]),
    );
    writeSilences(path, [a]);
    expect(readSilences(path, T0, log.logger, ALONE).checkedStates).toBeUndefined();
    writeFileSync(path, JSON.stringify({ version: 1, silences: [a], checkedStates: { a: "asleep" } }));
    const read = readSilences(path, T0, log.logger, ALONE);
    expect([read.silences, read.checkedStates]).toEqual([[a], undefined]);
    expect(log.text()).toContain("checkedStates unreadable");
  });

  it("leaves no temp file beside it", () => {
    const path = fileIn();
    writeSilences(path, [a]);
    writeSilences(path, [a, b]);
    expect(readdirSync(join(path, ".."))).toEqual(["silences.json"]);
  });
});
