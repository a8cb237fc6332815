// Child loggers: one binding per key, enforced where every child logger is made.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { childLogger, componentLogger } from "../src/logger.js";

const root = () => pino({ base: { service: "pragma-monitor" } }, { write: () => undefined });

describe("childLogger / componentLogger", () => {
  it("adds bindings the parent does not have", () => {
    const ws = componentLogger(root(), "ws");
    expect(childLogger(ws, { client: 3, remote: "127.0.0.1" }).bindings()).toEqual({
      service: "pragma-monitor",
      component: "ws",
      client: 3,
      remote: "127.0.0.1",
    });
  });

  it.each([
    [{ component: "chatops" }, "component"],
    [{ component: "ws", client: 1 }, "component"],
    [{ service: "other" }, "service"],
  ])("refuses to re-bind a key the parent binds: %j", (bindings, key) => {
    const sinks = componentLogger(root(), "sinks");
    expect(() => childLogger(sinks, bindings)).toThrow(`logger already binds ${key}`);
  });
});
