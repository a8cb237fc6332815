// The banner's verdict, table-driven: which condition leads, its level, and what is listed below it.
import { describe, expect, it } from "vitest";
import { decideBanner, type BannerInput } from "../../web/src/banner.js";
import type { SinkStatus } from "../../web/src/types.js";
import { alert } from "./frames.js";

const sink = (overrides: Partial<SinkStatus> = {}): SinkStatus => ({
  name: "hook",
  kind: "webhook",
  running: true,
  failing: false,
  pending: 0,
  lastError: null,
  ...overrides,
});
const base: BannerInput = {
  connection: "live",
  alerts: [],
  sinks: [sink()],
  readiness: { ready: true, reasons: [] },
};
const upstream = (endpoint: string) =>
  alert({
    fingerprint: `up-${endpoint}`,
    rule: "upstream_error",
    severity: "critical",
    labels: { endpoint },
  });

describe("decideBanner", () => {
  it.each<[string, Partial<BannerInput>, { level: string; title: string; details: string[] }]>([
    ["nothing wrong", {}, { level: "ok", title: "All good", details: [] }],
    [
      "before the first reply",
      { connection: "connecting" },
      { level: "unknown", title: "Connecting to the daemon…", details: [] },
    ],
    [
      "token refused",
      { connection: "unauthorized", alerts: [alert()] },
      { level: "unknown", title: "A token is required to read this daemon", details: [] },
    ],
    ["one warning firing", { alerts: [alert()] }, { level: "warning", title: "1 firing", details: [] }],
    [
      "a critical among them",
      { alerts: [alert(), alert({ fingerprint: "c", severity: "critical" })] },
      { level: "critical", title: "2 firing (1 critical)", details: [] },
    ],
    [
      "only silenced alerts",
      { alerts: [alert({ silencedBy: ["s1"] })] },
      { level: "ok", title: "All good", details: ["1 silenced"] },
    ],
    [
      "upstream failing leads, firing and silenced follow",
      { alerts: [upstream("a"), upstream("b"), alert({ silencedBy: ["s1"] })] },
      {
        level: "critical",
        title: "Upstream failing on 2 targets",
        details: ["2 firing (2 critical)", "1 silenced"],
      },
    ],
    [
      "a failing sink (status) and a sink_error alert name both",
      {
        sinks: [sink({ name: "slack", failing: true }), sink()],
        alerts: [alert({ fingerprint: "s", rule: "sink_error", labels: { sink: "pager" } })],
      },
      { level: "warning", title: "1 firing", details: ["degraded sinks: pager, slack"] },
    ],
    [
      "a sink that could not start is degraded",
      { sinks: [sink({ running: false })] },
      { level: "warning", title: "Degraded sink: hook", details: [] },
    ],
    [
      "not ready yet",
      { readiness: { ready: false, reasons: ["first poll of offchain:BTC/USD pending"] } },
      { level: "warning", title: "Not ready: first poll of offchain:BTC/USD pending", details: [] },
    ],
    [
      "disconnected: the last known state, no level",
      { connection: "reconnecting", alerts: [alert()] },
      {
        level: "unknown",
        title: "Disconnected: reconnecting (showing the last known state)",
        details: ["1 firing"],
      },
    ],
  ])("%s", (_name, input, expected) => {
    expect(decideBanner({ ...base, ...input })).toEqual(expected);
  });
});
