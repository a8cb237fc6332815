// SIGHUP reconfiguration of the chat-ops sinks: unchanged sinks keep running, changed/removed stop, new ones start.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "./harness.js";
import { nthAlert, sinkOf } from "./helpers.js";
import { waitFor } from "../../wait-for.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

describe("chat-ops reconfigure", () => {
  it("keeps unchanged sinks, restarts changed ones, stops removed ones and starts new ones", async () => {
    const sinks = (url: string) => [
      sinkOf("webhook", `${url}/a`, { name: "a" }),
      sinkOf("slack", `${url}/b`, { name: "b" }),
      sinkOf("discord", `${url}/gone`, { name: "gone" }),
    ];
    h = await startHarness(sinks);
    h.publish(nthAlert(1));
    await waitFor(() => expect(h!.rx.requests).toHaveLength(3));
    const url = h.rx.url;

    await h.chatops.reconfigure(
      [
        sinkOf("webhook", `${url}/a`, { name: "a" }),
        sinkOf("slack", `${url}/b2`, { name: "b" }),
        sinkOf("telegram", `${url}/c`, { name: "c" }),
      ],
      1_000,
    );
    const line = h.log.lines.find((l) => l["msg"] === "chat-ops sinks reconfigured");
    expect(line).toMatchObject({ kept: ["a"], stopped: ["b", "gone"], started: ["b", "c"] });
    expect(h.chatops.status().map((s) => s.name)).toEqual(["a", "b", "c"]);

    h.publish(nthAlert(2));
    await waitFor(() => expect(h!.rx.requests).toHaveLength(6));
    const second = h.rx.requests.slice(3).map((r) => r.url.replace(/\/bot.*$/, "/bot"));
    expect(second.sort()).toEqual(["/a", "/b2", "/c/bot"]);
  });

  it("refuses a duplicate sink name and keeps running the old sinks", async () => {
    h = await startHarness((url) => [sinkOf("webhook", `${url}/a`, { name: "a" })]);
    const url = h.rx.url;
    await expect(
      h.chatops.reconfigure(
        [sinkOf("webhook", `${url}/x`, { name: "x" }), sinkOf("slack", `${url}/y`, { name: "x" })],
        0,
      ),
    ).rejects.toThrow(/duplicate sink name "x"/);
    h.publish(nthAlert(1));
    await waitFor(() => expect(h!.rx.requests.map((r) => r.url)).toEqual(["/a"]));
  });

  it("reports an enabled sink whose outbox could not be opened as not running, until a reload drops it", async () => {
    h = await startHarness(() => []);
    const url = h.rx.url;
    // a file where the outbox directory must go: opening any outbox fails
    writeFileSync(join(h.stateDir, "outbox"), "not a directory");
    await expect(h.chatops.reconfigure([sinkOf("slack", `${url}/b`, { name: "broken" })], 0)).rejects.toThrow(
      /broken/,
    );
    expect(h.chatops.status()).toEqual([
      {
        name: "broken",
        kind: "slack",
        pending: 0,
        failing: false,
        consecutiveFailures: 0,
        lastError: "outbox could not be opened",
        running: false,
        groups: 0,
      },
    ]);
    await h.chatops.reconfigure([], 0);
    expect(h.chatops.status()).toEqual([]);
  });
});
