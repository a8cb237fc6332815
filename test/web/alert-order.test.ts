// The page's list of firing alerts: a child alert (causedBy) sits right after its parent, with a link to it.
import { describe, expect, it } from "vitest";
import { alertAnchor, sortAlerts } from "../../web/src/alert-order.js";
import { alert } from "./frames.js";

const at = (s: number): string => new Date(Date.UTC(2026, 10, 22, 10, 0, s)).toISOString();

describe("sortAlerts", () => {
  it("puts each child right after its firing parent, the rest by severity then age", () => {
    const parent = alert({ fingerprint: "p", rule: "upstream_down", severity: "critical", startsAt: at(5) });
    const older = alert({ fingerprint: "o", severity: "critical", startsAt: at(1) });
    const childA = alert({
      fingerprint: "a",
      rule: "upstream_error",
      severity: "warning",
      startsAt: at(2),
      causedBy: "p",
    });
    const childB = alert({
      fingerprint: "b",
      rule: "upstream_error",
      severity: "critical",
      startsAt: at(3),
      causedBy: "p",
    });
    const info = alert({ fingerprint: "i", severity: "info", startsAt: at(0) });
    const orphan = alert({ fingerprint: "x", severity: "warning", startsAt: at(4), causedBy: "gone" });
    const order = sortAlerts([info, childA, orphan, parent, childB, older]).map((a) => a.fingerprint);
    expect(order).toEqual(["o", "p", "b", "a", "x", "i"]);
  });

  it("keeps the plain order when no alert names a firing parent", () => {
    const alerts = [
      alert({ fingerprint: "1", startsAt: at(2) }),
      alert({ fingerprint: "2", startsAt: at(1) }),
    ];
    expect(sortAlerts(alerts).map((a) => a.fingerprint)).toEqual(["2", "1"]);
  });

  it("anchors an alert's item by its fingerprint, safe in a URL fragment", () => {
    expect(alertAnchor("9f2c41d0a7b3e6f1")).toBe("alert-9f2c41d0a7b3e6f1");
    expect(alertAnchor("a b/#")).toBe("alert-a_b__");
  });
});
