// The direct `cluster_error` notification's queue and delivery ids: a firing resolved before it was sent is
// dropped with its resolve; the head (maybe in flight) is never taken out; each transition has its own stable id.
import { describe, expect, it } from "vitest";
import { clusterErrorTransition } from "../../src/cluster/cluster-error-alert.js";
import { directDeliveryId, queueTransition } from "../../src/cluster/cluster-error-notify.js";

const T0 = Date.parse("2026-11-27T00:00:00.000Z");

/** A firing cluster_error of member m1 at `atMs`, and its resolve 5 s later. */
function incident(atMs: number) {
  const firing = clusterErrorTransition(null, "timeout", "m1", atMs);
  if (firing === null) throw new Error("no firing");
  const resolved = clusterErrorTransition(firing, null, "m1", atMs + 5_000);
  if (resolved === null) throw new Error("no resolve");
  return { firing, resolved };
}

describe("queueTransition", () => {
  it("drops a firing resolved before it was sent, with its resolve", () => {
    const first = incident(T0);
    const second = incident(T0 + 60_000);
    const queue = queueTransition(queueTransition([first.firing], second.firing), second.resolved);
    expect(queue).toEqual([first.firing]);
  });

  it("keeps the head (it may be in flight) and queues its resolve after it", () => {
    const { firing, resolved } = incident(T0);
    expect(queueTransition([firing], resolved)).toEqual([firing, resolved]);
  });

  it("queues a resolve whose firing was sent already", () => {
    const { resolved } = incident(T0);
    expect(queueTransition([], resolved)).toEqual([resolved]);
  });
});

describe("directDeliveryId", () => {
  it("is stable per transition and differs between the firing, its resolve and the next incident", () => {
    const first = incident(T0);
    const second = incident(T0 + 60_000);
    const ids = [first.firing, first.resolved, second.firing, second.resolved].map(directDeliveryId);
    expect(new Set(ids).size).toBe(4);
    expect(directDeliveryId({ ...first.firing })).toBe(ids[0]);
  });
});
