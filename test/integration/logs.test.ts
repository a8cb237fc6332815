// The daemon's own log lines, read raw from an injected destination: one binding per key, errors with type and stack.
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startWebhookReceiver, type WebhookReceiver } from "../e2e/webhook-receiver.js";
import { buildConfig, http, makeTempDir, startAppWithConfig, type LogLine, type TestApp } from "./harness.js";
import { parseStrictJson } from "./strict-json.js";
import { WsClient } from "./ws-client.js";

const SECRET = "logs-test-webhook-secret-0123456789";
// five sources, the three fastest update within 2 s: a spike moves the median soon (as in alerts.test.ts)
const PAIR = "STRK/USD";

let app: TestApp | undefined;
let receiver: WebhookReceiver | undefined;
let ws: WsClient | undefined;
afterEach(async () => {
  ws?.close();
  await app?.stop();
  await receiver?.close();
  app = receiver = ws = undefined;
});

/** pino's serialized error: what an operator needs to find the cause. */
function expectSerializedError(line: LogLine, type: string): void {
  expect(line["err"], line.msg).toMatchObject({
    type,
    message: expect.any(String) as unknown,
    stack: expect.stringContaining("\n    at ") as unknown,
  });
}

describe("daemon log lines", () => {
  it("never repeat a key, and log upstream and state errors through pino's err serializer", async () => {
    receiver = await startWebhookReceiver(SECRET, 500); // a failing sink: chat-ops logs with sink, kind, host
    const dir = makeTempDir();
    const config = buildConfig(
      {
        monitors: { offchain: [{ pair: PAIR, periodMs: 100 }] },
        rules: [
          { kind: "price_change", windowMs: 1_000, threshold: 0.03 },
          { kind: "upstream_error", threshold: 3 },
        ],
        sinks: [{ kind: "webhook", name: "hook", url: receiver.url, secret: SECRET, failureThreshold: 2 }],
      },
      dir,
    );
    app = await startAppWithConfig(config, { dir, productionLogger: true });
    const t = app;

    // every component that logs speaks at least once: ws (a session's own child logger), alerts, chat-ops, pipeline
    ({ client: ws } = await WsClient.connect(t.wsUrl));
    expect((await http("GET", `${t.httpUrl}/metrics`)).status).toBe(200);
    await t.waitForEvent(
      (e) => e.type === "price" && Date.parse(e.tick.observedAt) >= t.startedAtMs + 1_200,
      5_000,
      "a window of prices",
    );
    await t.injectFault({ kind: "spike", pair: PAIR, factor: 1.05 });
    await t.waitForAlert((e) => e.alert.rule === "price_change", 8_000, "price_change firing");
    await t.logs.waitFor((line) => line.msg === "chat-ops delivery failed", 8_000, "a failed delivery");
    await t.injectFault({ kind: "outage", status: 503, endpoint: "pair_price", pair: PAIR, retryAfterS: 0 });
    const pollFailed = await t.logs.waitFor((line) => line.msg === "poll failed", 5_000, "poll failed");

    // a state error on the stop path: the checkpoint cannot replace a directory
    const checkpointPath = join(config.state.dir, "alerts.json");
    rmSync(checkpointPath, { force: true });
    mkdirSync(checkpointPath);
    const report = await t.stop();
    expect(report.failedSteps).toEqual(["checkpoint"]);

    const duplicates: string[] = [];
    for (const raw of t.logs.raw) {
      try {
        parseStrictJson(raw);
      } catch (error) {
        duplicates.push(`${(error as Error).message}`);
      }
    }
    expect(duplicates).toEqual([]);
    const components = new Set(t.logs.lines.map((line) => line["component"]));
    for (const component of ["alerts", "chatops", "ws", "pipeline", "upstream"])
      expect(components, `a line from ${component}`).toContain(component);
    expect(
      t.logs.lines.some(
        (line) => line["component"] === "chatops" && line["sink"] === "hook" && line["host"] !== undefined,
      ),
    ).toBe(true);

    expectSerializedError(pollFailed, "PmError");
    expect(pollFailed["err"]).toMatchObject({ code: "PM_ERR_UPSTREAM_HTTP" });
    const stopError = t.logs.lines.find((line) => line.msg === "error while stopping: checkpoint");
    expect(stopError, "the failed stop step is logged").toBeDefined();
    expectSerializedError(stopError!, "Error");
    expect(stopError!["err"]).toMatchObject({ code: "EISDIR" });
  }, 30_000);
});
