// createSystemdNotifier: silent outside systemd, `systemd-notify --pid` inside, WATCHDOG=1 throttled to half of WatchdogSec.
import { describe, expect, it } from "vitest";
import { createSystemdNotifier, type SystemdMessage } from "../../src/systemd.js";

interface Sent {
  readonly file: string;
  readonly args: readonly string[];
}

/** A notifier over an injected exec and clock; `at(ms, message)` sends at that time and returns what was exec'd. */
function harness(env: Readonly<Record<string, string | undefined>>) {
  const sent: Sent[] = [];
  let nowMs = 0;
  const notify = createSystemdNotifier({
    env,
    pid: 4242,
    nowMs: () => nowMs,
    exec: (file, args) => void sent.push({ file, args }),
  });
  return {
    sent,
    at(timeMs: number, message: SystemdMessage): readonly Sent[] {
      nowMs = timeMs;
      const before = sent.length;
      notify(message);
      return sent.slice(before);
    },
  };
}

const SOCKET = { NOTIFY_SOCKET: "/run/systemd/notify" };

describe("createSystemdNotifier", () => {
  it.each([
    ["no NOTIFY_SOCKET", {}],
    ["empty NOTIFY_SOCKET", { NOTIFY_SOCKET: "" }],
    ["WATCHDOG_USEC without NOTIFY_SOCKET", { WATCHDOG_USEC: "30000000" }],
  ])("does nothing outside systemd (%s)", (_name, env) => {
    const h = harness(env);
    for (const message of ["READY=1", "WATCHDOG=1", "STOPPING=1"] as const) h.at(0, message);
    expect(h.sent).toEqual([]);
  });

  it.each(["READY=1", "STOPPING=1"] as const)(
    "sends %s through systemd-notify on behalf of the main pid",
    (message) => {
      expect(harness(SOCKET).at(0, message)).toEqual([
        { file: "systemd-notify", args: ["--pid=4242", message] },
      ]);
    },
  );

  it.each([
    ["unset", undefined],
    ["zero", "0"],
    ["garbage", "soon"],
  ])("never sends WATCHDOG=1 when WATCHDOG_USEC is %s (no watchdog configured)", (_name, usec) => {
    const h = harness({ ...SOCKET, WATCHDOG_USEC: usec });
    h.at(0, "WATCHDOG=1");
    h.at(60_000, "WATCHDOG=1");
    expect(h.sent).toEqual([]);
  });

  it("throttles WATCHDOG=1 to half of WatchdogSec (30 s → one ping per 15 s)", () => {
    const h = harness({ ...SOCKET, WATCHDOG_USEC: "30000000" });
    const timeline: [number, number][] = [
      [0, 1], // first ping at once
      [1_000, 0],
      [14_999, 0],
      [15_000, 1],
      [16_000, 0],
      [30_000, 1],
    ];
    for (const [timeMs, expected] of timeline)
      expect(h.at(timeMs, "WATCHDOG=1"), `t=${timeMs}`).toHaveLength(expected);
    expect(h.sent.every((s) => s.args.join(" ") === "--pid=4242 WATCHDOG=1")).toBe(true);
  });

  it("does not let READY=1 or STOPPING=1 use up the watchdog interval", () => {
    const h = harness({ ...SOCKET, WATCHDOG_USEC: "2000000" });
    expect(h.at(0, "WATCHDOG=1")).toHaveLength(1);
    expect(h.at(500, "STOPPING=1")).toHaveLength(1);
    expect(h.at(1_000, "WATCHDOG=1")).toHaveLength(1);
  });
});
