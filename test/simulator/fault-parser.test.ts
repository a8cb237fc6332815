// parseFault: one zod schema per fault kind, errors naming the field under the caller's path.
import { describe, expect, it } from "vitest";
import { isPmError } from "../../src/domain/errors.js";
import { parseFault } from "../../src/simulator/fault-parser.js";

function errorOf(json: unknown, path?: string): { message: string; field: string | undefined } {
  try {
    parseFault(json, path);
  } catch (error) {
    if (!isPmError(error, "PM_ERR_CONFIG")) throw error;
    return { message: error.message, field: error.details.field };
  }
  throw new Error("expected parseFault to throw");
}

describe("parseFault", () => {
  it.each([
    [{ kind: "spike", pair: "BTC/USD", factor: 1.5 }],
    [{ kind: "outage", status: 429, endpoint: "vault", retryAfterS: 0 }],
    [{ kind: "fundingSpike", pair: "ETH/USD", hourlyRate: -0.01 }],
    [{ kind: "dropSources", sources: ["BINANCE"], pair: "BTC/USD" }],
    [{ kind: "frozenPublisher", publisher: "P", network: "starknet-sepolia" }],
  ])("accepts %j as it is", (fault) => {
    expect(parseFault(fault)).toEqual(fault);
  });

  it.each([
    ["x", "body", "scenario body: must be an object"],
    [{}, "body", "scenario body.kind: must be a non-empty string"],
    [{ kind: "boom" }, "body.fault", 'scenario body.fault.kind: unknown fault kind "boom"'],
    [{ kind: "latency", latencyMs: "5" }, "fault", "scenario fault.latencyMs: must be a non-negative number"],
    [{ kind: "latency", latencyMs: "5", typo: 1 }, "fault", "scenario fault.typo: unknown field"],
    [
      { kind: "vaultStatus", vault: "v", status: "gone" },
      "f",
      "scenario f.status: must be one of live, paused, retired",
    ],
    [{ kind: "vaultStatus", vault: "v", status: 1 }, "f", "scenario f.status: must be a non-empty string"],
    [{ kind: "fundingSpike", pair: "BTC/USD" }, "f", "scenario f.factor: factor or hourlyRate is required"],
  ])("refuses %j under %s", (json, path, message) => {
    const error = errorOf(json, path);
    expect(error.message).toBe(message);
    expect(message).toContain(`scenario ${error.field}: `);
  });
});
