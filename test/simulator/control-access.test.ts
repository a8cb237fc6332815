// The simulator's control endpoint refuses what a web page could send it: text/plain POSTs, foreign Origins and Hosts.
import { afterEach, describe, expect, it } from "vitest";
import { rawStatus } from "../integration/harness.js";
import { startTestSim, type TestSim } from "./helpers.js";

const SPIKE = JSON.stringify({ kind: "spike", pair: "BTC/USD", factor: 1.05 });
const JSON_TYPE = { "content-type": "application/json" };

let t: TestSim | undefined;
afterEach(async () => {
  await t?.sim.close();
  t = undefined;
});

describe("simulator control endpoint access", () => {
  it.each<[string, number, Record<string, string>]>([
    // what a cross-site <form> or no-cors fetch can send without a preflight
    ["text/plain (no preflight)", 415, { "content-type": "text/plain" }],
    ["form-urlencoded", 415, { "content-type": "application/x-www-form-urlencoded" }],
    ["no content type", 415, {}],
    ["JSON from another origin", 403, { ...JSON_TYPE, origin: "http://evil.example" }],
    ["JSON through a rebinding Host", 403, { ...JSON_TYPE, host: "rebind.evil.example:3000" }],
    ["JSON from a local tool", 201, JSON_TYPE],
    ["JSON with a charset", 201, { "content-type": "application/json; charset=utf-8" }],
  ])("POST /_sim/faults with %s → %i", async (_name, status, headers) => {
    t = await startTestSim();
    expect(await rawStatus(t.sim.port, "POST", "/_sim/faults", headers, SPIKE)).toBe(status);
    expect(t.sim.control.state().faults).toHaveLength(status === 201 ? 1 : 0);
  });

  it("applies the Host and Origin rules to DELETE and GET too", async () => {
    t = await startTestSim();
    t.sim.control.inject({ kind: "spike", pair: "BTC/USD", factor: 1.05 });
    expect(await rawStatus(t.sim.port, "DELETE", "/_sim/faults", { origin: "http://evil.example" })).toBe(
      403,
    );
    expect(await rawStatus(t.sim.port, "GET", "/_sim/state", { host: "rebind.evil.example" })).toBe(403);
    expect(t.sim.control.state().faults).toHaveLength(1);
    expect(await rawStatus(t.sim.port, "DELETE", "/_sim/faults", {})).toBe(204);
  });

  it("requires one of the simulator's API keys when keys are set", async () => {
    t = await startTestSim({ apiKeys: ["sim-key"] });
    expect(await rawStatus(t.sim.port, "POST", "/_sim/faults", JSON_TYPE, SPIKE)).toBe(401);
    expect(
      await rawStatus(t.sim.port, "POST", "/_sim/faults", { ...JSON_TYPE, "x-api-key": "nope" }, SPIKE),
    ).toBe(401);
    expect(await rawStatus(t.sim.port, "GET", "/_sim/state", {})).toBe(401);
    expect(
      await rawStatus(t.sim.port, "POST", "/_sim/faults", { ...JSON_TYPE, "x-api-key": "sim-key" }, SPIKE),
    ).toBe(201);
  });
});
