// Untrusted JSON into the page's types: well-formed answers pass, anything malformed is refused (null), never thrown.
import { describe, expect, it } from "vitest";
import {
  decodeAlert,
  decodeFrame,
  decodeSilences,
  decodeStatus,
  decodeTargets,
} from "../../web/src/decode.js";
import { alert, silence, target } from "./frames.js";

describe("decodeFrame", () => {
  it.each([
    ["not JSON", "{"],
    ["not an object", "[1]"],
    ["an unknown type", '{"type":"news"}'],
    ["an alert event without seq", JSON.stringify({ type: "alert", alert: alert() })],
    [
      "an alert with a bad severity",
      JSON.stringify({ type: "alert", seq: 1, alert: { ...alert(), severity: "loud" } }),
    ],
    ["a negative seq", JSON.stringify({ type: "heartbeat", seq: -1 })],
    [
      "a subscribed reply with a bad active entry",
      JSON.stringify({ type: "subscribed", id: "1", seq: 1, active: [{}] }),
    ],
    ["a price without its tick", '{"type":"price"}'],
  ])("refuses %s", (_name, text) => {
    expect(decodeFrame(text)).toBeNull();
  });

  it("keeps an alert's fields as sent", () => {
    expect(decodeAlert(alert({ silencedBy: ["a", "b"] }))).toEqual(alert({ silencedBy: ["a", "b"] }));
    expect(decodeAlert({ ...alert(), silencedBy: [1] })).toBeNull();
  });
});

describe("API answers", () => {
  it("reads /targets, /status and /silences", () => {
    expect(decodeTargets({ targets: [target()] })).toEqual([target()]);
    expect(decodeSilences([silence()])).toEqual([silence()]);
    const status = {
      version: "0.1.0",
      startedAt: "2026-11-22T10:00:00.000Z",
      readiness: { ready: true, reasons: [] },
      upstream: { url: "http://127.0.0.1:1", simulator: true },
      sinks: [{ name: "hook", kind: "webhook", running: true, failing: false, pending: 0, lastError: null }],
    };
    expect(decodeStatus(status)).toEqual(status);
  });

  it.each([
    ["targets as a bare array", () => decodeTargets([target()])],
    ["a target without labels", () => decodeTargets({ targets: [{ ...target(), labels: null }] })],
    ["a silence without status", () => decodeSilences([{ ...silence(), status: undefined }])],
    [
      "a silence with an unknown state",
      () => decodeSilences([silence({ status: { state: "gone" as "expired" } })]),
    ],
    ["a status without sinks", () => decodeStatus({ version: "1", readiness: { ready: true, reasons: [] } })],
  ])("refuses %s", (_name, decode) => {
    expect(decode()).toBeNull();
  });
});
