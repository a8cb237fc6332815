// Routing table: filters, send-resolved and the no-self-report rule for sink_error.
import { describe, expect, it } from "vitest";
import type { AlertSinkConfig, SinkCommonConfig } from "../../../src/config/types.js";
import type { AlertPayload } from "../../../src/domain/events.js";
import { routeAlert } from "../../../src/sinks/chatops/route.js";
import { makeAlert, resolvedOf, sinkOf } from "./helpers.js";

const sinkError = makeAlert({
  rule: "sink_error",
  labels: { sink: "slack", endpoint: "slack" },
  severity: "critical",
});

const cases: readonly [string, Partial<SinkCommonConfig>, AlertPayload, boolean][] = [
  ["no filter passes", {}, makeAlert(), true],
  ["disabled sink", { enabled: false }, makeAlert(), false],
  ["rule listed", { rules: ["price_change", "stale_price"] }, makeAlert(), true],
  ["rule not listed", { rules: ["stale_price"] }, makeAlert(), false],
  [
    "rule id listed (label rule_id)",
    { rules: ["price_change_10s"] },
    makeAlert({ labels: { pair: "BTC/USD", rule_id: "price_change_10s" } }),
    true,
  ],
  [
    "another rule id of the same kind",
    { rules: ["price_change_10s"] },
    makeAlert({ labels: { pair: "BTC/USD", rule_id: "price_change_1h" } }),
    false,
  ],
  ["rule id equal to its kind", { rules: ["price_change_10s"] }, makeAlert(), false],
  ["pair listed", { pairs: ["BTC/USD"] }, makeAlert(), true],
  ["pair not listed", { pairs: ["ETH/USD"] }, makeAlert(), false],
  ["pair filter needs a pair label", { pairs: ["BTC/USD"] }, makeAlert({ labels: { vault: "v1" } }), false],
  ["labels match exactly", { labels: { market: "offchain", window: "1min" } }, makeAlert(), true],
  ["label value differs", { labels: { market: "onchain" } }, makeAlert(), false],
  ["label missing", { labels: { network: "mainnet" } }, makeAlert(), false],
  ["severity above minimum", { minSeverity: "warning" }, makeAlert({ severity: "critical" }), true],
  ["severity at minimum", { minSeverity: "warning" }, makeAlert({ severity: "warning" }), true],
  ["severity below minimum", { minSeverity: "critical" }, makeAlert({ severity: "warning" }), false],
  ["resolved with sendResolved", { sendResolved: true }, resolvedOf(makeAlert()), true],
  ["resolved without sendResolved", { sendResolved: false }, resolvedOf(makeAlert()), false],
  ["firing without sendResolved", { sendResolved: false }, makeAlert(), true],
  ["own sink_error is not routed to itself", { name: "slack" }, sinkError, false],
  ["another sink's sink_error is routed", { name: "pager" }, sinkError, true],
];

describe("routeAlert", () => {
  it.each(cases)("%s", (_name, overrides, alert, expected) => {
    expect(routeAlert(sinkOf("slack", "http://127.0.0.1:1", overrides), alert)).toBe(expected);
  });
});

const watchdog = makeAlert({
  rule: "watchdog",
  severity: "info",
  labels: { env: "prod" },
  fingerprint: "wd",
});
const watchdogCases: readonly [string, AlertSinkConfig["kind"], Partial<SinkCommonConfig>, boolean][] = [
  ["never pages Slack through rules: []", "slack", {}, false],
  ["never pages PagerDuty through rules: []", "pagerduty", { minSeverity: "info" }, false],
  ["not to a sink listing other rules", "slack", { rules: ["price_change"] }, false],
  [
    "to any sink whose rules name it, whatever minSeverity",
    "slack",
    { rules: ["watchdog"], minSeverity: "critical" },
    true,
  ],
  [
    "to Alertmanager with rules: [] (its Watchdog convention)",
    "alertmanager",
    { minSeverity: "critical" },
    true,
  ],
  ["not to Alertmanager listing other rules", "alertmanager", { rules: ["price_change"] }, false],
  [
    "to Alertmanager naming it with a pairs filter",
    "alertmanager",
    { rules: ["watchdog"], pairs: ["BTC/USD"] },
    true,
  ],
  ["not to a disabled sink", "alertmanager", { enabled: false }, false],
];

describe("routeAlert: the watchdog", () => {
  it.each(watchdogCases)("%s", (_name, kind, overrides, expected) => {
    expect(routeAlert(sinkOf(kind, "http://127.0.0.1:1", overrides), watchdog)).toBe(expected);
  });
});
