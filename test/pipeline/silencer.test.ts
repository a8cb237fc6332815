// The silencer on virtual time over a real hub and file: lifecycle events, re-announcements, restarts, windows, disk failures.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { clusterSilencerOptions } from "../../src/cluster/cluster-shared.js";
import type { AlertPayload, JournaledEvent } from "../../src/domain/events.js";
import type { Silence } from "../../src/domain/silence.js";
import type { SilenceChange, SilenceInput, SilenceRefusal } from "../../src/domain/silence-set.js";
import { createEventHub, type EventHub } from "../../src/pipeline/event-hub.js";
import { createSilencer, type Silencer } from "../../src/pipeline/silencer.js";
import { createJournal, type Journal } from "../../src/state/journal.js";
import { silenceFilePath } from "../../src/state/silence-file.js";
import { HOUR_MS, MINUTE_MS, T0, iso, matcher, silence } from "../domain/helpers.js";
import { captureLogger, nthAlert, resolvedOf } from "../sinks/chatops/helpers.js";
import { createVirtualClock, type VirtualClock } from "./helpers.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const BTC = nthAlert(1, { labels: { pair: "BTC/USD", market: "offchain" } });
const ETH = nthAlert(2, { labels: { pair: "ETH/USD", market: "offchain" } });

/** One running daemon's silences: a hub over `journal`, a silencer over `path`, both on `clock`. */
interface Run {
  readonly hub: EventHub;
  readonly silencer: Silencer;
  readonly journal: Journal;
  readonly log: ReturnType<typeof captureLogger>;
  /** What the hub published since the last call, one line each (see `line`). */
  published(): string[];
}

interface World {
  readonly clock: VirtualClock;
  readonly stateDir: string;
  readonly path: string;
  /** Start a run; `journal` from a previous run makes it a restart (the firing alerts restored from it). */
  start(options?: { previous?: Run; maintenance?: (nowMs: number) => readonly Silence[] }): Run;
}

function world(): World {
  const clock = createVirtualClock(T0);
  const stateDir = mkdtempSync(join(tmpdir(), "pm-silencer-"));
  dirs.push(stateDir);
  const path = silenceFilePath(stateDir);
  let runs = 0;
  return {
    clock,
    stateDir,
    path,
    start({ previous, maintenance } = {}) {
      const prefix = `r${++runs}-`;
      let next = 0;
      const journal = createJournal(1_000, previous?.journal.entries() ?? []);
      const log = captureLogger();
      const silencer = createSilencer({
        path,
        nowMs: clock.nowMs,
        logger: log.logger,
        newId: () => `${prefix}${++next}`,
        setTimer: clock.setTimer,
        clearTimer: clock.clearTimer,
        ...(maintenance === undefined ? {} : { maintenance }),
      });
      const hub = createEventHub({
        journal,
        nowMs: clock.nowMs,
        version: "test",
        silencing: (alert) => silencer.silencing(alert),
      });
      if (previous !== undefined)
        hub.restoreActive(previous.hub.activeAlerts().map(({ silencedBy: _decided, ...alert }) => alert));
      let seen = journal.lastSeq;
      silencer.start(hub);
      return {
        hub,
        silencer,
        journal,
        log,
        published() {
          const { events } = journal.after(seen);
          seen = journal.lastSeq;
          return events.map(line);
        },
      };
    },
  };
}

/** A world whose silences file holds one silence stored by a first start, its `updatedAt` then edited to `updatedAt`. */
function worldWithStoredUpdatedAt(updatedAt: string): World {
  const w = world();
  const first = w.start();
  first.silencer.put(input());
  first.silencer.stop();
  const file = JSON.parse(readFileSync(w.path, "utf8")) as { silences: { updatedAt: string }[] };
  file.silences[0]!.updatedAt = updatedAt;
  writeFileSync(w.path, JSON.stringify(file));
  return w;
}

/** `BTC/USD firing repeat [s1]` or `silence_created r1-1 created {pair="BTC/USD"}`. */
function line(event: JournaledEvent): string {
  if (event.type === "lifecycle") {
    const { id, cause, matchers } = event.detail ?? {};
    return `${event.event} ${String(id)} ${String(cause)} ${String(matchers)}`;
  }
  const { labels, status, reason, silencedBy } = event.alert;
  return `${labels["pair"]} ${status} ${reason}${silencedBy === undefined ? "" : ` [${silencedBy.join(",")}]`}`;
}

function input(overrides: Partial<SilenceInput> = {}): SilenceInput {
  return {
    matchers: [matcher("pair", "=", "BTC/USD")],
    startsAt: iso(T0),
    endsAt: iso(T0 + HOUR_MS),
    createdBy: "alice",
    comment: "deploy",
    ...overrides,
  };
}

function accepted(result: SilenceChange | SilenceRefusal): SilenceChange {
  if (!("silences" in result)) throw new Error(`refused: ${result.status} ${result.message}`);
  return result;
}

const fire = (run: Run, alert: AlertPayload): void => void run.hub.publishAlert(alert);
const resolve = (run: Run, alert: AlertPayload): void => void run.hub.publishAlert(resolvedOf(alert));

describe("silencer", () => {
  it("creating a silence announces it and re-announces, muted, each firing alert it matches", () => {
    const run = world().start();
    fire(run, BTC);
    fire(run, ETH);
    run.published();
    const { silence: created } = accepted(run.silencer.put(input()));
    expect(created.id).toBe("r1-1");
    expect(run.published()).toEqual([
      'silence_created r1-1 created {pair="BTC/USD"}',
      "BTC/USD firing repeat [r1-1]",
    ]);
    expect(run.hub.activeAlerts().map((alert) => alert.silencedBy)).toEqual([["r1-1"], undefined]);
    expect(run.silencer.list().map((view) => [view.id, view.status.state])).toEqual([["r1-1", "active"]]);
  });

  it("a silence ending by time is announced and what it held is re-announced unmuted", () => {
    const w = world();
    const run = w.start();
    fire(run, BTC);
    run.silencer.put(input());
    run.published();
    w.clock.advance(HOUR_MS - 1);
    expect(run.published()).toEqual([]);
    w.clock.advance(1);
    expect(run.published()).toEqual(['silence_expired r1-1 ended {pair="BTC/USD"}', "BTC/USD firing repeat"]);
    expect(run.silencer.get("r1-1")?.status.state).toBe("expired");
    resolve(run, BTC);
    expect(run.published()).toEqual(["BTC/USD resolved resolved"]);
  });

  it("expiring a silence early is announced and re-announces what it held", () => {
    const w = world();
    const run = w.start();
    fire(run, BTC);
    run.silencer.put(input());
    w.clock.advance(MINUTE_MS);
    run.published();
    const { silence: ended } = accepted(run.silencer.expire("r1-1"));
    expect(ended.endsAt).toBe(iso(T0 + MINUTE_MS));
    expect(run.published()).toEqual([
      'silence_expired r1-1 expired {pair="BTC/USD"}',
      "BTC/USD firing repeat",
    ]);
    // its end time passing later announces nothing more
    w.clock.advance(2 * HOUR_MS);
    expect(run.published()).toEqual([]);
  });

  it("a pending silence mutes from its start, announced when created", () => {
    const w = world();
    const run = w.start();
    fire(run, BTC);
    run.silencer.put(input({ startsAt: iso(T0 + 10 * MINUTE_MS) }));
    expect(run.published()).toEqual([
      "BTC/USD firing first",
      'silence_created r1-1 created {pair="BTC/USD"}',
    ]);
    expect(run.silencer.get("r1-1")?.status.state).toBe("pending");
    w.clock.advance(10 * MINUTE_MS);
    expect(run.published()).toEqual(["BTC/USD firing repeat [r1-1]"]);
  });

  it("an alert firing under a silence carries silencedBy, and so does its resolve: it was never notified", () => {
    const run = world().start();
    run.silencer.put(input());
    fire(run, BTC);
    fire(run, ETH);
    resolve(run, BTC);
    resolve(run, ETH);
    expect(run.published()).toEqual([
      'silence_created r1-1 created {pair="BTC/USD"}',
      "BTC/USD firing first [r1-1]",
      "ETH/USD firing first",
      "BTC/USD resolved resolved [r1-1]",
      "ETH/USD resolved resolved",
    ]);
  });

  it("the resolve of an alert notified and then silenced goes out", () => {
    const run = world().start();
    fire(run, BTC);
    run.silencer.put(input());
    resolve(run, BTC);
    expect(run.published()).toEqual([
      "BTC/USD firing first",
      'silence_created r1-1 created {pair="BTC/USD"}',
      "BTC/USD firing repeat [r1-1]",
      "BTC/USD resolved resolved",
    ]);
  });

  it("updating a silence's matchers replaces it: the old one expires, what changed is re-announced", () => {
    const run = world().start();
    fire(run, BTC);
    fire(run, ETH);
    run.silencer.put(input());
    run.published();
    const change = accepted(
      run.silencer.put(input({ id: "r1-1", matchers: [matcher("pair", "=", "ETH/USD")] })),
    );
    expect(change.replaced?.id).toBe("r1-1");
    expect(run.published()).toEqual([
      'silence_expired r1-1 replaced {pair="BTC/USD"}',
      'silence_created r1-2 updated {pair="ETH/USD"}',
      "BTC/USD firing repeat",
      "ETH/USD firing repeat [r1-2]",
    ]);
  });

  it("updating a silence in place re-announces nothing that stays muted, and its new end applies", () => {
    const w = world();
    const run = w.start();
    fire(run, BTC);
    run.silencer.put(input());
    run.published();
    accepted(run.silencer.put(input({ id: "r1-1", endsAt: iso(T0 + 2 * HOUR_MS) })));
    expect(run.published()).toEqual(['silence_created r1-1 updated {pair="BTC/USD"}']);
    w.clock.advance(HOUR_MS);
    expect(run.published()).toEqual([]);
    w.clock.advance(HOUR_MS);
    expect(run.published()).toEqual(['silence_expired r1-1 ended {pair="BTC/USD"}', "BTC/USD firing repeat"]);
  });

  it("waits for the next start or end, checking at least once a minute", () => {
    const w = world();
    const run = w.start();
    expect(w.clock.pendingDelaysMs()).toEqual([MINUTE_MS]);
    run.silencer.put(input({ startsAt: iso(T0 + 30_000) }));
    expect(w.clock.pendingDelaysMs()).toEqual([30_000]);
    run.silencer.stop();
    expect(w.clock.pendingDelaysMs()).toEqual([]);
  });

  it("refuses what the set refuses, changing nothing", () => {
    const run = world().start();
    run.silencer.put(input());
    run.published();
    expect(run.silencer.put(input({ id: "nope" }))).toMatchObject({ status: 404 });
    expect(run.silencer.put(input({ matchers: [] }))).toMatchObject({ status: 400 });
    expect(run.silencer.expire("nope")).toMatchObject({ status: 404 });
    accepted(run.silencer.expire("r1-1"));
    run.published();
    expect(run.silencer.expire("r1-1")).toMatchObject({ status: 409 });
    expect(run.published()).toEqual([]);
  });
});

describe("silencer: the file", () => {
  it("silences persist across a new silencer on the same file", () => {
    const w = world();
    const first = w.start();
    first.silencer.put(input());
    first.silencer.put(input({ matchers: [matcher("rule", "=~", "stale_.*")], startsAt: iso(T0 + HOUR_MS) }));
    first.silencer.put(input({ matchers: [matcher("pair", "=", "ETH/USD")] }));
    first.silencer.expire("r1-3");
    first.silencer.stop();
    const second = w.start();
    expect(second.silencer.list()).toEqual(first.silencer.list());
    expect(second.silencer.list().map((view) => [view.id, view.status.state])).toEqual([
      ["r1-1", "active"],
      ["r1-2", "pending"],
      ["r1-3", "expired"],
    ]);
  });

  it("forgets silences expired longer than the retention, in the file too", () => {
    const w = world();
    const run = w.start();
    run.silencer.put(input());
    w.clock.advance(HOUR_MS + 120 * HOUR_MS - 1);
    expect(run.silencer.list().map((view) => view.id)).toEqual(["r1-1"]);
    w.clock.advance(MINUTE_MS);
    expect(run.silencer.list()).toEqual([]);
    expect(JSON.parse(readFileSync(w.path, "utf8"))).toEqual({ version: 1, silences: [], checkedStates: {} });
  });

  it("a write that fails answers 503 and changes nothing", () => {
    const w = world();
    const run = w.start();
    fire(run, BTC);
    run.silencer.put(input());
    const before = run.silencer.list();
    const file = readFileSync(w.path, "utf8");
    run.published();
    // the state directory became a file: no write can succeed in it
    rmSync(w.stateDir, { recursive: true });
    writeFileSync(w.stateDir, file);
    for (const refused of [
      run.silencer.put(input({ matchers: [matcher("pair", "=", "ETH/USD")] })),
      run.silencer.put(input({ id: "r1-1", comment: "changed" })),
      run.silencer.expire("r1-1"),
    ])
      expect(refused).toMatchObject({ status: 503, error: "state_unwritable" });
    expect(run.silencer.list()).toEqual(before);
    expect(run.published()).toEqual([]);
    expect(run.hub.activeAlerts()[0]?.silencedBy).toEqual(["r1-1"]);
    expect(
      run.log.lines.filter((entry) => entry["msg"] === "could not write the silences file"),
    ).toHaveLength(3);
  });

  it("a state directory removed under it is created again by the next write", () => {
    const w = world();
    const run = w.start();
    rmSync(w.stateDir, { recursive: true });
    accepted(run.silencer.put(input()));
    expect(
      w
        .start()
        .silencer.list()
        .map((view) => view.id),
    ).toEqual(["r1-1"]);
  });
});

describe("silencer: after a restart", () => {
  it("an alert notified then silenced still has its resolve heard", () => {
    const w = world();
    const first = w.start();
    fire(first, BTC);
    first.silencer.put(input());
    first.silencer.stop();
    const second = w.start({ previous: first });
    expect(second.hub.activeAlerts()[0]?.silencedBy).toEqual(["r1-1"]);
    resolve(second, BTC);
    expect(second.published()).toEqual(["BTC/USD resolved resolved"]);
  });

  it("an alert never notified keeps its resolve muted", () => {
    const w = world();
    const first = w.start();
    first.silencer.put(input());
    fire(first, BTC);
    first.silencer.stop();
    const second = w.start({ previous: first });
    resolve(second, BTC);
    expect(second.published()).toEqual(["BTC/USD resolved resolved [r1-1]"]);
  });

  it("a silence that ended while the daemon was down re-announces what it held, at start", () => {
    const w = world();
    const first = w.start();
    first.silencer.put(input());
    fire(first, BTC);
    first.silencer.stop();
    w.clock.advance(2 * HOUR_MS);
    const second = w.start({ previous: first });
    expect(second.published()).toEqual([
      'silence_expired r1-1 ended {pair="BTC/USD"}',
      "BTC/USD firing repeat",
    ]);
    resolve(second, BTC);
    expect(second.published()).toEqual(["BTC/USD resolved resolved"]);
  });

  it("an end announced before a restart is not announced again, nor one expired through the API", () => {
    const w = world();
    const first = w.start();
    first.silencer.put(input());
    const early = accepted(first.silencer.put(input({ matchers: [matcher("pair", "=", "ETH/USD")] })));
    first.silencer.expire(early.silence.id);
    w.clock.advance(2 * HOUR_MS);
    expect(first.published()).toEqual([
      'silence_created r1-1 created {pair="BTC/USD"}',
      'silence_created r1-2 created {pair="ETH/USD"}',
      'silence_expired r1-2 expired {pair="ETH/USD"}',
      'silence_expired r1-1 ended {pair="BTC/USD"}',
    ]);
    first.silencer.stop();
    const second = w.start({ previous: first });
    expect(second.published()).toEqual([]);
    second.silencer.stop();
    expect(w.start({ previous: second }).published()).toEqual([]);
  });

  it("a silences file from before the states were kept announces nothing at start", () => {
    const w = world();
    const first = w.start();
    first.silencer.put(input());
    first.silencer.stop();
    const { checkedStates: _old, ...file } = JSON.parse(readFileSync(w.path, "utf8")) as Record<
      string,
      unknown
    >;
    writeFileSync(w.path, JSON.stringify(file));
    w.clock.advance(2 * HOUR_MS);
    expect(w.start({ previous: first }).published()).toEqual([]);
  });

  it("a stored updatedAt far ahead of the clock (edited by hand) is set to now: counted, written back, and the next update is at now", () => {
    const w = worldWithStoredUpdatedAt(iso(T0 + 24 * HOUR_MS));
    w.clock.advance(MINUTE_MS);
    const clamped: number[] = [];
    const log = captureLogger();
    const options = { path: w.path, nowMs: w.clock.nowMs, logger: log.logger };
    const silencer = createSilencer({ ...options, onClamped: (count) => clamped.push(count) });
    expect(clamped).toEqual([1]);
    expect(silencer.get("r1-1")).toMatchObject({
      updatedAt: iso(T0 + MINUTE_MS),
      status: { state: "active" },
    });
    expect(log.lines).toEqual([
      expect.objectContaining({ level: 50, id: "r1-1", setTo: iso(T0 + MINUTE_MS) }),
    ]);
    // written back at once: the next start reads a sound time and reports nothing
    expect(readFileSync(w.path, "utf8")).toContain(`"updatedAt":"${iso(T0 + MINUTE_MS)}"`);
    w.clock.advance(MINUTE_MS);
    const change = silencer.put({ ...input({ comment: "longer" }), id: "r1-1" });
    expect(change).toMatchObject({ silence: { id: "r1-1", updatedAt: iso(T0 + 2 * MINUTE_MS) } });
  });

  it("in cluster mode a stored updatedAt far ahead of the clock is kept (a warning), not written back, and the next update lands past it", () => {
    const w = worldWithStoredUpdatedAt(iso(T0 + 24 * HOUR_MS));
    const text = readFileSync(w.path, "utf8");
    w.clock.advance(MINUTE_MS);
    const clamped: number[] = [];
    const log = captureLogger();
    const silencer = createSilencer({
      path: w.path,
      nowMs: w.clock.nowMs,
      logger: log.logger,
      onClamped: (count) => clamped.push(count),
      ...clusterSilencerOptions(() => undefined),
    });
    expect(clamped).toEqual([]);
    expect(silencer.get("r1-1")).toMatchObject({ updatedAt: iso(T0 + 24 * HOUR_MS) });
    expect(log.lines).toEqual([expect.objectContaining({ level: 40, id: "r1-1" })]);
    expect(readFileSync(w.path, "utf8")).toBe(text);
    // the other members may hold that version: this member's next change must be newer than it, or they ignore it
    const change = silencer.put({ ...input({ comment: "longer" }), id: "r1-1" });
    expect(change).toMatchObject({ silence: { updatedAt: iso(T0 + 24 * HOUR_MS + 1) } });
  });

  it("a silence still running keeps muting, and ends on time", () => {
    const w = world();
    const first = w.start();
    first.silencer.put(input());
    fire(first, BTC);
    first.silencer.stop();
    w.clock.advance(30 * MINUTE_MS);
    const second = w.start({ previous: first });
    fire(second, ETH);
    expect(second.published()).toEqual(["ETH/USD firing first"]);
    w.clock.advance(30 * MINUTE_MS);
    expect(second.published()).toEqual([
      'silence_expired r1-1 ended {pair="BTC/USD"}',
      "BTC/USD firing repeat",
    ]);
  });
});

describe("silencer: maintenance windows", () => {
  const window = silence("maintenance:nightly", T0 + 10 * MINUTE_MS, T0 + 20 * MINUTE_MS, [
    matcher("pair", "=~", "BTC/.*"),
  ]);

  it("a window mutes like a silence: announced when it starts and when it ends", () => {
    const w = world();
    const run = w.start({ maintenance: () => [window] });
    fire(run, BTC);
    expect(run.silencer.get("maintenance:nightly")?.status.state).toBe("pending");
    w.clock.advance(10 * MINUTE_MS);
    expect(run.published()).toEqual([
      "BTC/USD firing first",
      'silence_created maintenance:nightly window_started {pair=~"BTC/.*"}',
      "BTC/USD firing repeat [maintenance:nightly]",
    ]);
    fire(run, nthAlert(3, { labels: { pair: "BTC/EUR" } }));
    expect(run.published()).toEqual(["BTC/EUR firing first [maintenance:nightly]"]);
    w.clock.advance(10 * MINUTE_MS);
    expect(run.published()).toEqual([
      'silence_expired maintenance:nightly window_ended {pair=~"BTC/.*"}',
      "BTC/USD firing repeat",
      "BTC/EUR firing repeat",
    ]);
  });

  it("a window that started while the daemon was down is announced at start, and its end on time", () => {
    const w = world();
    const first = w.start({ maintenance: () => [window] });
    first.silencer.stop();
    w.clock.advance(15 * MINUTE_MS);
    const second = w.start({ previous: first, maintenance: () => [window] });
    expect(second.published()).toEqual([
      'silence_created maintenance:nightly window_started {pair=~"BTC/.*"}',
    ]);
    w.clock.advance(5 * MINUTE_MS);
    expect(second.published()).toEqual(['silence_expired maintenance:nightly window_ended {pair=~"BTC/.*"}']);
  });

  it("a window can be neither updated nor expired through the API (409)", () => {
    const w = world();
    const run = w.start({ maintenance: () => [window] });
    w.clock.advance(10 * MINUTE_MS);
    run.published();
    expect(run.silencer.put(input({ id: "maintenance:nightly" }))).toMatchObject({
      status: 409,
      error: "maintenance_window",
    });
    expect(run.silencer.expire("maintenance:nightly")).toMatchObject({
      status: 409,
      error: "maintenance_window",
    });
    expect(run.silencer.get("maintenance:nightly")?.status.state).toBe("active");
    expect(run.published()).toEqual([]);
  });

  it("new windows (a reload) apply at once", () => {
    const w = world();
    const run = w.start();
    fire(run, BTC);
    run.published();
    w.clock.advance(10 * MINUTE_MS);
    run.silencer.setMaintenance(() => [window]);
    expect(run.published()).toEqual([
      'silence_created maintenance:nightly window_started {pair=~"BTC/.*"}',
      "BTC/USD firing repeat [maintenance:nightly]",
    ]);
    run.silencer.setMaintenance(() => []);
    expect(run.published()).toEqual(["BTC/USD firing repeat"]);
  });
});
