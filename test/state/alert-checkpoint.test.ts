// The checkpoint file's schema: garbage is refused with PM_ERR_STATE naming the field; a bad engine keeps the checkpoint's seq.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { PersistedAlert } from "../../src/domain/alert-persistence.js";
import { isPmError } from "../../src/domain/errors.js";
import {
  activeAlerts,
  createMonitorState,
  exportAlertState,
  importAlertState,
  restoreAnnounced,
} from "../../src/domain/monitor.js";
import {
  checkpointJson,
  parseCheckpointJson,
  parsePersistedAlertState,
  readCheckpoint,
} from "../../src/state/alert-checkpoint.js";

const payload = {
  fingerprint: "0123456789abcdef",
  status: "firing",
  rule: "stale_price",
  severity: "warning",
  labels: { pair: "BTC/USD" },
  summary: "BTC/USD is stale",
  value: 90_000,
  threshold: 60_000,
  startsAt: "2026-11-22T10:00:00.000Z",
  endsAt: null,
  reason: "first",
  context: { ageMs: 90_000, flapping: false, source: null },
} as const;
const firing: PersistedAlert = {
  fingerprint: "0123456789abcdef",
  ruleId: "stale_price",
  rule: "stale_price",
  labels: { pair: "BTC/USD" },
  targetIds: ["offchain:BTC/USD"],
  scopeKey: "",
  status: "firing",
  rawActive: true,
  pendingSinceMs: 1_000,
  startsAtMs: 1_000,
  lastAnnouncedMs: null,
  flipTimesMs: [1_000],
  flapping: false,
  announced: payload,
  causedBy: null,
};
/** A logger whose lines the test reads back as objects. */
function captureLogger(): { logger: pino.Logger; lines: { msg: string }[] } {
  const lines: { msg: string }[] = [];
  const logger = pino(
    { level: "debug" },
    { write: (line: string) => lines.push(JSON.parse(line) as { msg: string }) },
  );
  return { logger, lines };
}
const withAlert = (alert: object) => ({ version: 1, alerts: [alert] });

function messageOf(value: unknown): string {
  try {
    parsePersistedAlertState(value);
  } catch (error) {
    expect(isPmError(error, "PM_ERR_STATE")).toBe(true);
    return (error as Error).message;
  }
  throw new Error("expected a PM_ERR_STATE error");
}

describe("parsePersistedAlertState", () => {
  it("accepts what the engine exports, pending alerts without a payload included", () => {
    const pending = { ...firing, fingerprint: "fedcba9876543210", status: "pending", announced: null };
    const state = { version: 1, alerts: [firing, pending] };
    expect(parsePersistedAlertState(JSON.parse(JSON.stringify(state)))).toEqual(state);
  });

  it("reads a checkpoint written before cause rules (no causedBy) as alerts without a parent, and keeps a parent", () => {
    const { causedBy: _none, ...old } = firing;
    expect(parsePersistedAlertState({ version: 1, alerts: [old] }).alerts[0]?.causedBy).toBeNull();
    const child = {
      ...firing,
      causedBy: "fedcba9876543210",
      announced: { ...payload, causedBy: "fedcba9876543210" },
    };
    const parsed = parsePersistedAlertState({ version: 1, alerts: [child] }).alerts[0];
    expect(parsed?.causedBy).toBe("fedcba9876543210");
    expect(parsed?.announced?.causedBy).toBe("fedcba9876543210");
    expect(
      "causedBy" in (parsePersistedAlertState({ version: 1, alerts: [old] }).alerts[0]?.announced ?? {}),
    ).toBe(false);
  });

  it("accepts an alert restored from the journal that has not seen fresh data yet (no targets known)", () => {
    // A restart restores announced alerts without their targets; a checkpoint taken before the next poll
    // must still load, or the next start loses every alert announced before it.
    const restored = restoreAnnounced(createMonitorState(), [payload]);
    const exported = JSON.parse(JSON.stringify(exportAlertState(restored))) as unknown;
    const parsed = parsePersistedAlertState(exported);
    expect(parsed.alerts).toHaveLength(1);
    expect(parsed.alerts[0]?.targetIds).toEqual([]);
    expect(activeAlerts(importAlertState(parsed))).toEqual([payload]);
  });

  it.each<[string, unknown, string]>([
    ["null", null, "alert state: (root): "],
    ["a number", 1, "alert state: (root): "],
    ["another version", { version: 2, alerts: [] }, "alert state: version: "],
    ["a bare status", withAlert({ status: "firing" }), "alert state: alerts[0].fingerprint: "],
    ["a bad status", withAlert({ ...firing, status: "resolved" }), "alert state: alerts[0].status: "],
    [
      "a short fingerprint",
      withAlert({ ...firing, fingerprint: "abc" }),
      "alerts[0].fingerprint: must be 16 hex",
    ],
    ["an unknown rule", withAlert({ ...firing, rule: "moon" }), "alert state: alerts[0].rule: "],
    [
      "a bad payload",
      withAlert({ ...firing, announced: { ...payload, severity: "fatal" } }),
      "alerts[0].announced.severity: ",
    ],
    [
      "a firing alert without payload",
      withAlert({ ...firing, announced: null }),
      "alerts[0].announced: a firing alert needs",
    ],
    [
      "a duplicate fingerprint",
      { version: 1, alerts: [firing, firing] },
      "alerts[1].fingerprint: duplicate fingerprint",
    ],
  ])("refuses %s", (_name, value, message) => {
    expect(messageOf(value)).toContain(message);
  });
});

describe("readCheckpoint", () => {
  const fileWith = (content: object): string => {
    const path = join(mkdtempSync(join(tmpdir(), "pm-checkpoint-")), "alerts.json");
    writeFileSync(path, JSON.stringify(content));
    return path;
  };

  it("reads a valid checkpoint", () => {
    const engine = { version: 1, alerts: [firing] };
    const log = captureLogger();
    expect(readCheckpoint(fileWith({ version: 1, lastSeq: 7, engine }), 0, log.logger)).toEqual({
      lastSeq: 7,
      engine,
    });
    expect(log.lines).toEqual([]);
  });

  it("keeps the seq of a checkpoint whose engine is invalid, and says why", () => {
    const log = captureLogger();
    const path = fileWith({ version: 1, lastSeq: 7, engine: withAlert({ ...firing, status: "gone" }) });
    expect(readCheckpoint(path, 0, log.logger)).toEqual({ lastSeq: 7, engine: null });
    expect(log.lines.map((line) => line.msg)).toEqual([
      "alert checkpoint invalid: rebuilding alert state from the journal",
    ]);
  });

  it("ignores a file of an unknown format", () => {
    const log = captureLogger();
    expect(readCheckpoint(fileWith({ version: 9, lastSeq: 7 }), 0, log.logger)).toBeNull();
    expect(log.lines.map((line) => line.msg)).toEqual([
      "alert state file has an unknown format: ignoring it",
    ]);
  });
});

describe("checkpointJson / parseCheckpointJson (the file's format, and a cluster target's record in KV)", () => {
  const engine = { version: 1 as const, alerts: [firing] };

  it("round-trips, with the writer's fields beside the checkpoint ignored by the reader", () => {
    const text = checkpointJson({ lastSeq: 7, engine }, Date.parse("2026-11-22T10:00:00.000Z"), {
      memberId: "m1",
      leaseRevision: 42,
    });
    expect(JSON.parse(text)).toMatchObject({ version: 1, memberId: "m1", leaseRevision: 42, lastSeq: 7 });
    expect(parseCheckpointJson(text)).toEqual({ lastSeq: 7, engine });
  });

  it("is what readCheckpoint reads from a file", () => {
    const path = join(mkdtempSync(join(tmpdir(), "pm-checkpoint-")), "alerts.json");
    writeFileSync(path, checkpointJson({ lastSeq: 3, engine }, 0));
    expect(readCheckpoint(path, 0, captureLogger().logger)).toEqual({ lastSeq: 3, engine });
  });

  it("refuses text that is not JSON, an unknown format, or a bad engine with PM_ERR_STATE", () => {
    const refusal = (text: string): string => {
      try {
        parseCheckpointJson(text);
      } catch (error) {
        expect(isPmError(error, "PM_ERR_STATE")).toBe(true);
        return (error as Error).message;
      }
      throw new Error("expected a PM_ERR_STATE error");
    };
    expect(refusal("{")).toBe("alert checkpoint: not JSON");
    expect(refusal(JSON.stringify({ version: 9, lastSeq: 1, engine }))).toBe(
      "alert checkpoint: unknown format",
    );
    expect(
      refusal(JSON.stringify({ version: 1, lastSeq: 1, engine: withAlert({ ...firing, status: "x" }) })),
    ).toMatch(/^alert state: alerts\[0\]\.status: /);
  });
});
