// The options a member's NATS connections open with: credentials only when set, and no async stack traces.
import { describe, expect, it } from "vitest";
import { natsConnectOptions } from "../../src/cluster/nats-connect.js";

const NATS = { servers: ["nats://127.0.0.1:4222"], user: "", password: "", token: "", replicas: 1 };

describe("natsConnectOptions", () => {
  it("builds no stack per request (a member makes ~50 a second) and reconnects for ever", () => {
    expect(natsConnectOptions(NATS, "m1", 2_000)).toEqual({
      servers: ["nats://127.0.0.1:4222"],
      name: "m1",
      timeout: 2_000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      noAsyncTraces: true,
    });
  });

  it("passes the credentials that are set, and only those", () => {
    expect(natsConnectOptions({ ...NATS, user: "u", password: "p" }, "m1", 2_000)).toMatchObject({
      user: "u",
      pass: "p",
    });
    expect(natsConnectOptions({ ...NATS, token: "t" }, "m1", 2_000)).not.toHaveProperty("user");
    expect(natsConnectOptions({ ...NATS, token: "t" }, "m1", 2_000)).toMatchObject({ token: "t" });
  });
});
