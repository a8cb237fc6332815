// External labels: name validation and stamping (the alert's own label wins, the fingerprint never changes).
import { describe, expect, it } from "vitest";
import { externalLabelNameProblem, withExternalLabels } from "../../src/domain/external-labels.js";
import type { AlertPayload } from "../../src/domain/events.js";
import { fingerprintOf } from "../../src/domain/fingerprint.js";

const labels = { pair: "BTC/USD", market: "offchain" };
const alert: AlertPayload = {
  fingerprint: fingerprintOf("price_change", labels),
  status: "firing",
  rule: "price_change",
  severity: "warning",
  labels,
  summary: "BTC/USD moved",
  value: 0.05,
  threshold: 0.02,
  startsAt: "2026-11-22T10:00:00.000Z",
  endsAt: null,
  reason: "first",
  context: {},
};

describe("externalLabelNameProblem", () => {
  it.each([
    ["env", undefined],
    ["region", undefined],
    ["_dc2", undefined],
    ["2env", /label-name syntax/],
    ["env-name", /label-name syntax/],
    ["", /label-name syntax/],
    ["__meta", /reserved by Prometheus/],
    ["pair", /sets itself/],
    ["sink", /sets itself/],
    ["rule_id", /sets itself/],
    ["alertname", /sets itself/],
    ["severity", /sets itself/],
  ])("%j → %s", (name, problem) => {
    const got = externalLabelNameProblem(name);
    if (problem === undefined) expect(got).toBeUndefined();
    else expect(got).toMatch(problem);
  });
});

describe("withExternalLabels", () => {
  it.each([
    ["adds missing labels", { env: "prod" }, { env: "prod", ...labels }],
    ["lets the alert's own label win", { env: "prod", market: "spoofed" }, { env: "prod", ...labels }],
    ["is a no-op without external labels", {}, labels],
  ])("%s", (_name, external, expected) => {
    const stamped = withExternalLabels(alert, external);
    expect(stamped.labels).toEqual(expected);
    expect(stamped.fingerprint).toBe(alert.fingerprint); // the condition's identity, not the deployment's
    expect(alert.labels).toEqual(labels); // the input is not mutated
  });
});
