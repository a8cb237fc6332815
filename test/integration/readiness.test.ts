// /readyz of the real daemon: 503 names the failing targets and sinks, 200 again once they recover; /healthz stays liveness.
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator, type RunningSimulator } from "../../src/simulator/server.js";
import { startWebhookReceiver, type WebhookReceiver } from "../e2e/webhook-receiver.js";
import { http, startTestApp, type JsonObject, type TestApp } from "./harness.js";
import { waitFor } from "../wait-for.js";

const SECRET = "readiness-test-secret-0123456789";

/** A 127.0.0.1 port that nothing listens on (bound once, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** GET /readyz, parsed. */
async function readyz(t: TestApp): Promise<{ status: number; body: { status: string; reasons?: string[] } }> {
  const response = await http("GET", `${t.httpUrl}/readyz`);
  return {
    status: response.status,
    body: JSON.parse(response.text) as { status: string; reasons?: string[] },
  };
}

describe("/readyz of the real daemon", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const start = async (layer: JsonObject): Promise<TestApp> => {
    const t = await startTestApp(layer);
    cleanups.push(async () => void (await t.stop()));
    return t;
  };

  it("is 503 naming every target while the upstream refuses connections, 200 once it answers", async () => {
    const port = await closedPort();
    const t = await start({
      upstream: { url: `http://127.0.0.1:${port}` },
      monitors: {
        offchain: [
          { pair: "BTC/USD", periodMs: 200 },
          { pair: "ETH/USD", periodMs: 200 },
        ],
      },
    });
    await waitFor(
      async () => {
        const { body } = await readyz(t);
        // first polls are spread over the period: wait until both targets have failed one
        expect(body.reasons?.some((r) => r.startsWith("2 target(s) failing"))).toBe(true);
      },
      { timeout: 5_000, interval: 50 },
    );
    const failing = await readyz(t);
    expect(failing.status).toBe(503);
    expect(failing.body.status).toBe("not_ready");
    const reason = failing.body.reasons?.find((r) => r.includes("failing")) ?? "";
    expect(reason).toMatch(/^2 target\(s\) failing: /);
    for (const pair of ["BTC/USD", "ETH/USD"])
      expect(reason).toMatch(
        new RegExp(
          `offchain:${pair}:spot:median:1s \\(PM_ERR_UPSTREAM_\\w+, \\d+ consecutive failure\\(s\\), no successful poll since start\\)`,
        ),
      );
    expect(t.app.readiness().ready).toBe(false);
    expect((await http("GET", `${t.httpUrl}/healthz`)).status).toBe(200);

    // the upstream comes up on that very port: the next polls succeed and readiness follows
    const sim: RunningSimulator = await startSimulator({ host: "127.0.0.1", port, seed: 3 });
    cleanups.push(() => sim.close());
    await waitFor(async () => expect((await readyz(t)).status).toBe(200), {
      timeout: 5_000,
      interval: 50,
    });
    expect((await readyz(t)).body).toEqual({ status: "ready" });
    expect(t.app.readiness()).toEqual({ ready: true, reasons: [] });
  });

  it("is 503 naming a sink whose receiver answers 500, 200 once it delivers again", async () => {
    const receiver: WebhookReceiver = await startWebhookReceiver(SECRET, 500);
    cleanups.push(() => receiver.close());
    const t = await start({
      monitors: { offchain: [{ pair: "BTC/USD", periodMs: 200 }] },
      rules: [{ kind: "price_level", direction: "above", threshold: 1 }],
      sinks: [{ kind: "webhook", name: "hook", url: receiver.url, secret: SECRET, failureThreshold: 2 }],
    });
    await receiver.deliveries.waitFor((d) => d.answeredStatus === 500, {
      timeoutMs: 5_000,
      what: "a delivery answered 500",
    });
    await waitFor(async () => expect((await readyz(t)).status).toBe(503), {
      timeout: 3_000,
      interval: 20,
    });
    const failing = await readyz(t);
    expect(failing.body.reasons).toEqual([
      expect.stringMatching(
        /^1 sink\(s\) failing: hook \(webhook, (sink_error firing, )?\d+ consecutive failed deliveries, last error: http_error 500\)$/,
      ),
    ]);

    receiver.status = 200;
    await receiver.deliveries.waitFor((d) => d.answeredStatus === 200, {
      timeoutMs: 10_000,
      what: "a delivery answered 200 after the receiver recovered",
    });
    await waitFor(async () => expect((await readyz(t)).status).toBe(200), {
      timeout: 3_000,
      interval: 20,
    });
    expect(t.app.readiness().ready).toBe(true);
  });
});
