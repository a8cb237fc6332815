// End-to-end: the built daemon as systemd or Docker runs it — alerts over WebSocket, signals, restarts, damaged state.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AlertEvent, LifecycleEvent } from "../../src/domain/events.js";
import { ensureBuilt, killAllDaemons, spawnDaemon, startDaemon, type LogLine } from "./daemon.js";
import {
  injectSpike,
  makeWorkDir,
  readOutbox,
  removeWorkDirs,
  testConfig,
  waitForFiles,
  writeConfig,
} from "./fixtures.js";
import { closeNotifySockets, listenNotifySocket, notifyToolsAvailable } from "./notify-socket.js";
import { accepted, startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";
import { alertFrames, closeAllWs, connectWs, type ServerFrame } from "./ws-client.js";

const SECRET = "e2e-webhook-secret-0123456789";
/** shutdown.drainTimeoutMs in testConfig; main.ts forces exit 1 one second after it. */
const DRAIN_MS = 2_000;
const ALERT_TIMEOUT_MS = 8_000;
/**
 * The rule's 10 s window needs 10 s of polled prices before it gives a verdict (no candle close can start
 * it, so its target is not warmed), so a spike is injected, and a resolve after a restart awaited, only
 * once that much history can exist.
 */
const WINDOW_HISTORY_MS = 10_500;
/** Tests that wait for the window's history once or twice. */
const WINDOW_TEST_TIMEOUT_MS = 50_000;
const windowHistory = (): Promise<void> => delay(WINDOW_HISTORY_MS);

const receivers: WebhookReceiver[] = [];
const receiver = async (status: number): Promise<WebhookReceiver> => {
  const started = await startWebhookReceiver(SECRET, status);
  receivers.push(started);
  return started;
};

const isFiring = (frame: ServerFrame): frame is AlertEvent =>
  frame.type === "alert" &&
  frame.alert.status === "firing" &&
  frame.alert.rule === "price_change" &&
  frame.alert.labels.pair === "BTC/USD";
const isLifecycle =
  (phase: LifecycleEvent["event"]) =>
  (frame: ServerFrame): frame is LifecycleEvent =>
    frame.type === "lifecycle" && frame.event === phase;
const seqOf = (frame: ServerFrame): number | undefined =>
  frame.type === "alert" || frame.type === "lifecycle" ? frame.seq : undefined;

/** Times the process's threads have blocked and been woken so far (Linux: voluntary context switches). */
function wakeUps(pid: number): number {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/task/${task}/status`, "utf8");
    } catch {
      continue; // the thread ended since the listing
    }
    const count = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1];
    if (count === undefined)
      throw new Error(`no voluntary_ctxt_switches in /proc/${pid}/task/${task}/status`);
    total += Number(count);
  }
  return total;
}

/** SIGTERM and expect a clean exit 0 before the drain deadline (the forced exit would be code 1). */
async function stopGracefully(daemon: {
  signal(s: NodeJS.Signals): void;
  waitExit(ms: number): Promise<unknown>;
}) {
  const startedAtMs = Date.now();
  daemon.signal("SIGTERM");
  expect(await daemon.waitExit(DRAIN_MS + 1_000)).toEqual({ code: 0, signal: null });
  return Date.now() - startedAtMs;
}

beforeAll(() => ensureBuilt(), 120_000);

afterEach(async () => {
  closeAllWs();
  closeNotifySockets();
  await killAllDaemons();
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  removeWorkDirs();
});

describe("pragma-monitor run (spawned from dist)", () => {
  it(
    "delivers an alert over WebSocket, then SIGTERM: lifecycle stopping, close 1001, exit 0",
    async () => {
      const work = makeWorkDir();
      writeConfig(work, testConfig(work));
      const daemon = await startDaemon(work.configFile, { cwd: work.dir });
      const client = await connectWs(daemon.wsUrl);
      await client.subscribe({ channels: ["alerts", "lifecycle"] });
      await windowHistory();

      await injectSpike(daemon.simulatorUrl, 30_000);
      const alert = await client.frames.waitFor(isFiring, {
        timeoutMs: ALERT_TIMEOUT_MS,
        what: "BTC/USD alert",
      });
      expect(alert.alert).toMatchObject({ reason: "first", labels: { window: "10s" } });
      // sources pick the spike up on their own 1–3 s cadence, so the median may cross 2 % before reaching 6 %
      expect(alert.alert.value).toBeGreaterThanOrEqual(0.02);
      expect(alert.alert.threshold).toBe(0.02);

      const elapsedMs = await stopGracefully(daemon);
      expect(elapsedMs).toBeLessThan(DRAIN_MS);
      const stopping = await client.frames.waitFor(isLifecycle("stopping"), {
        timeoutMs: 1_000,
        what: "stopping",
      });
      expect(stopping.seq).toBeGreaterThan(alert.seq);
      expect(await client.closed).toBe(1001);
      await daemon.waitLog("stopped", 1_000);
      expect(existsSync(join(work.stateDir, "pragma-monitor.pid"))).toBe(false);
    },
    WINDOW_TEST_TIMEOUT_MS,
  );

  it(
    "SIGTERM with a pending webhook message: exit 0, message kept on disk, delivered once after restart",
    async () => {
      const work = makeWorkDir();
      const hook = await receiver(503);
      writeConfig(work, testConfig(work, { webhook: { url: hook.url, secret: SECRET } }));
      const outboxFile = join(work.stateDir, "outbox", "hook.jsonl");

      const first = await startDaemon(work.configFile, { cwd: work.dir });
      await windowHistory();
      await injectSpike(first.simulatorUrl, 30_000);
      const refused = await hook.deliveries.waitFor((d) => d.event?.alert.status === "firing", {
        timeoutMs: ALERT_TIMEOUT_MS,
        what: "a first (refused) webhook delivery",
      });
      expect(refused).toMatchObject({ answeredStatus: 503, verified: true });
      const fingerprint = refused.event!.alert.fingerprint;

      await stopGracefully(first);
      const pending = readOutbox(outboxFile);
      expect(pending.map((e) => [e.id, e.payload.alert.fingerprint, e.payload.alert.status])).toContainEqual([
        refused.deliveryId,
        fingerprint,
        "firing",
      ]);

      hook.status = 200;
      const sinceRestart = hook.deliveries.mark();
      const second = await startDaemon(work.configFile, { cwd: work.dir });
      const delivered = await hook.deliveries.waitFor((d) => d.deliveryId === refused.deliveryId, {
        from: sinceRestart,
        timeoutMs: 10_000,
        what: "the pending message after restart",
      });
      expect(delivered).toMatchObject({ answeredStatus: 200, verified: true });
      expect(JSON.parse(delivered.rawBody)).toEqual(JSON.parse(refused.rawBody));
      await waitForFiles(
        join(work.stateDir, "outbox"),
        () => !readOutbox(outboxFile).some((e) => e.id === refused.deliveryId),
        { timeoutMs: 5_000, what: "the delivery acknowledged in the outbox" },
      );
      await stopGracefully(second);
      expect(accepted(hook.deliveries.items, fingerprint, "firing")).toHaveLength(1);
      expect(hook.deliveries.items.every((d) => d.verified)).toBe(true);
    },
    WINDOW_TEST_TIMEOUT_MS,
  );

  it("SIGHUP applies a valid new config and keeps the running one when the file is invalid", async () => {
    const work = makeWorkDir();
    writeConfig(work, testConfig(work));
    const daemon = await startDaemon(work.configFile, { cwd: work.dir });
    const client = await connectWs(daemon.wsUrl);
    await client.subscribe({ channels: ["lifecycle", "prices"] });
    const ethTick = (frame: ServerFrame): boolean => frame.type === "price" && frame.tick.pair === "ETH/USD";

    writeConfig(work, testConfig(work, { extraPairs: ["ETH/USD"] }));
    daemon.signal("SIGHUP");
    const reloaded = await client.frames.waitFor(isLifecycle("config_reloaded"), {
      timeoutMs: 5_000,
      what: "config_reloaded",
    });
    expect(reloaded.detail).toMatchObject({ targets: 2, rules: 1 });
    await daemon.waitLog("config reloaded", 2_000);
    await client.frames.waitFor(ethTick, { timeoutMs: 5_000, what: "an ETH/USD price after the reload" });

    const config = testConfig(work, { extraPairs: ["ETH/USD"] });
    writeConfig(work, { ...config, rules: [{ kind: "price_change", treshold: 0.1 }] });
    daemon.signal("SIGHUP");
    const rejected = await daemon.waitLog("config reload rejected: keeping the running config", 5_000);
    expect(rejected.level).toBe(50);
    // logged through pino's err serializer: type, message and stack, not String(error)
    expect(rejected.err).toMatchObject({
      type: "PmError",
      code: "PM_ERR_CONFIG",
      message: expect.stringContaining("rules[0].treshold") as unknown,
      stack: expect.any(String) as unknown,
    });

    const afterRejection = client.frames.mark();
    expect((await fetch(`${daemon.httpUrl}/healthz`)).status).toBe(200);
    await client.frames.waitFor(ethTick, {
      from: afterRejection,
      timeoutMs: 5_000,
      what: "ETH/USD still polled after the rejected reload",
    });
    expect(client.frames.items.filter(isLifecycle("config_reloaded"))).toHaveLength(1);
    await stopGracefully(daemon);
  });

  it(
    "kill -9 then restart: no duplicate notification, seq continues, the cleared alert resolves and is notified",
    async () => {
      const work = makeWorkDir();
      const hook = await receiver(200);
      writeConfig(work, testConfig(work, { webhook: { url: hook.url, secret: SECRET } }));
      const outboxFile = join(work.stateDir, "outbox", "hook.jsonl");

      const first = await startDaemon(work.configFile, { cwd: work.dir });
      const before = await connectWs(first.wsUrl);
      await before.subscribe({ channels: ["alerts", "lifecycle"] });
      // The spike lives in this simulator only: the restarted one has none, so the condition is gone after the restart.
      await windowHistory();
      await injectSpike(first.simulatorUrl, 20_000);
      const firing = await before.frames.waitFor(isFiring, {
        timeoutMs: ALERT_TIMEOUT_MS,
        what: "firing alert",
      });
      const { fingerprint } = firing.alert;
      const sent = await hook.deliveries.waitFor((d) => accepted([d], fingerprint, "firing").length === 1, {
        timeoutMs: 5_000,
        what: "firing webhook delivery",
      });
      // at-least-once is documented for a crash between the 200 and the ack: kill only once the ack is on disk
      await waitForFiles(
        join(work.stateDir, "outbox"),
        () => existsSync(outboxFile) && !readOutbox(outboxFile).some((e) => e.id === sent.deliveryId),
        { timeoutMs: 5_000, what: "the firing delivery acknowledged in the outbox" },
      );
      const lastSeqBeforeKill = Math.max(...before.frames.items.map((f) => seqOf(f) ?? 0));

      first.signal("SIGKILL");
      expect(await first.waitExit(5_000)).toEqual({ code: null, signal: "SIGKILL" });
      expect(existsSync(join(work.stateDir, "pragma-monitor.pid"))).toBe(true); // stale lock, taken over below

      const second = await startDaemon(work.configFile, { cwd: work.dir });
      const after = await connectWs(second.wsUrl);
      await after.subscribe({ channels: ["alerts", "lifecycle"], since: lastSeqBeforeKill });
      const resolved = await after.frames.waitFor(
        (f) => f.type === "alert" && f.alert.fingerprint === fingerprint && f.alert.status === "resolved",
        // held (no verdict is not "all clear") until the restarted daemon has the window's history again
        { timeoutMs: WINDOW_HISTORY_MS + ALERT_TIMEOUT_MS, what: "the alert resolved after the restart" },
      );
      expect(resolved.type === "alert" && resolved.alert.startsAt).toBe(firing.alert.startsAt);
      await hook.deliveries.waitFor((d) => accepted([d], fingerprint, "resolved").length === 1, {
        timeoutMs: 5_000,
        what: "resolved webhook delivery",
      });

      const seqs = after.frames.items.map(seqOf).filter((s): s is number => s !== undefined);
      expect(seqs.length).toBeGreaterThanOrEqual(2); // lifecycle started + the resolve
      expect(Math.min(...seqs)).toBeGreaterThan(lastSeqBeforeKill);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(alertFrames(after.frames.items, fingerprint, "firing")).toHaveLength(0);

      await stopGracefully(second);
      expect(accepted(hook.deliveries.items, fingerprint, "firing")).toHaveLength(1);
      expect(accepted(hook.deliveries.items, fingerprint, "resolved")).toHaveLength(1);
      const loggedFiring = second.logs.items.filter(
        (line: LogLine) =>
          line.event === "alert" &&
          JSON.stringify(line.alert).includes(`"status":"firing"`) &&
          line.raw.includes(fingerprint),
      );
      expect(loggedFiring).toHaveLength(0);
    },
    WINDOW_TEST_TIMEOUT_MS,
  );

  it("starts on a garbage alerts.json and a torn journal line: moves the file aside, seq continues", async () => {
    const work = makeWorkDir();
    writeConfig(work, testConfig(work));
    mkdirSync(work.stateDir, { recursive: true });
    writeFileSync(join(work.stateDir, "alerts.json"), "{ not json at all");
    const at = new Date().toISOString();
    const journal = [1, 2, 3].map((seq) =>
      JSON.stringify({ type: "lifecycle", event: "started", at, version: "0.1.0", seq }),
    );
    writeFileSync(join(work.stateDir, "journal.jsonl"), `${journal.join("\n")}\n{"type":"alert","seq":4,"al`);

    const daemon = await startDaemon(work.configFile, { cwd: work.dir });
    const quarantined = await daemon.waitLog(
      "alert state file unreadable: moved aside, starting clean",
      1_000,
    );
    expect(quarantined.level).toBe(50);
    expect(String(quarantined.movedTo)).toMatch(/alerts\.json\.corrupt-/);
    expect(existsSync(String(quarantined.movedTo))).toBe(true);
    expect(readFileSync(String(quarantined.movedTo), "utf8")).toBe("{ not json at all");
    expect(readdirSync(work.stateDir).filter((name) => name.startsWith("alerts.json.corrupt-"))).toHaveLength(
      1,
    );
    const torn = await daemon.waitLog("journal file had damaged lines: skipped them", 1_000);
    expect(torn.skippedLines).toBe(1);
    const started = await daemon.waitLog("lifecycle started", 1_000);
    expect(started.seq).toBe(4);
    const client = await connectWs(daemon.wsUrl);
    expect(client.frames.items[0]).toMatchObject({ type: "hello", seq: 4 });
    await stopGracefully(daemon);
  });

  it.skipIf(!notifyToolsAvailable)(
    "notifies systemd through NOTIFY_SOCKET: READY=1 once listening, WATCHDOG=1, STOPPING=1 (needs python3 and systemd-notify)",
    async () => {
      const work = makeWorkDir();
      writeConfig(work, testConfig(work));
      const notify = await listenNotifySocket(join(work.dir, "notify.sock"));
      const daemon = await startDaemon(work.configFile, {
        cwd: work.dir,
        env: { NOTIFY_SOCKET: join(work.dir, "notify.sock"), WATCHDOG_USEC: "2000000" },
      });
      const ready = await notify.messages.waitFor((m) => m.includes("READY=1"), {
        timeoutMs: 5_000,
        what: "READY=1",
      });
      expect(ready).toContain(`MAINPID=${daemon.pid}`);
      expect((await fetch(`${daemon.httpUrl}/healthz`)).status).toBe(200); // READY=1 came after listen
      await notify.messages.waitFor((m) => m.includes("WATCHDOG=1"), {
        timeoutMs: 5_000,
        what: "WATCHDOG=1",
      });
      await stopGracefully(daemon);
      await notify.messages.waitFor((m) => m.includes("STOPPING=1"), {
        timeoutMs: 3_000,
        what: "STOPPING=1",
      });
    },
  );

  it.runIf(process.platform === "linux")(
    "idles with few wake-ups: nothing to monitor, under 40 a second (prom-client's default lag sampler alone made 100)",
    async () => {
      const work = makeWorkDir();
      const idle = "http://127.0.0.1:9"; // never asked: no target
      const monitors = { offchain: [], onchain: [], publishers: [], funding: [], vaults: [] };
      writeConfig(work, { ...testConfig(work), upstream: { url: idle }, monitors });
      const daemon = await startDaemon(work.configFile, { cwd: work.dir, simulatorUrl: idle });
      await delay(3_000); // past start-up's own work
      const before = wakeUps(daemon.pid);
      await delay(5_000);
      expect((wakeUps(daemon.pid) - before) / 5).toBeLessThan(40);
    },
  );

  it("refuses to start a second daemon on the same state directory (pid lock)", async () => {
    const work = makeWorkDir();
    writeConfig(work, testConfig(work));
    const first = await startDaemon(work.configFile, { cwd: work.dir });
    const second = spawnDaemon(["run", "--config", work.configFile, "--set", "server.port=0"], {
      cwd: work.dir,
    });
    const refused = await second.logs.waitFor(
      (line) => line.msg?.startsWith("could not start") === true || line.msg === "pragma-monitor started",
      { timeoutMs: 10_000, what: "the second daemon to give up" },
    );
    // one clear line and exit 69 (EX_UNAVAILABLE), not 1 (reserved for a forced stop)
    expect(refused.msg).toBe(
      `could not start: state directory ${work.stateDir} is in use by another pragma-monitor (pid ${first.pid})`,
    );
    expect(refused.level).toBe(60);
    expect(await second.waitExit(5_000)).toEqual({ code: 69, signal: null });
    expect(second.logs.items.map((line) => line.msg)).toEqual([refused.msg]);
    expect(readFileSync(join(work.stateDir, "pragma-monitor.pid"), "utf8").trim()).toBe(String(first.pid));
    expect((await fetch(`${first.httpUrl}/healthz`)).status).toBe(200);
    await stopGracefully(first);
  });
});

describe("pragma-monitor check-config / run with a bad config", () => {
  const run = async (args: readonly string[], cwd: string) => {
    const child = spawnDaemon(args, { cwd });
    const exit = await child.waitExit(10_000);
    return { exit, stdout: child.logs.items.map((line) => line.raw).join("\n"), stderr: child.stderr() };
  };
  const badConfig = { server: { port: "nope" }, rules: [{ kind: "price_change", treshold: 0.1 }] };

  it("exits 0 and prints the effective config with secrets redacted", async () => {
    const work = makeWorkDir();
    const config = testConfig(work, { webhook: { url: "http://127.0.0.1:9/hook", secret: SECRET } });
    writeConfig(work, { ...config, server: { token: "e2e-server-token-value" } });
    const { exit, stdout, stderr } = await run(["check-config", "--config", work.configFile], work.dir);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(stderr).toContain("configuration OK");
    const effective = JSON.parse(stdout) as {
      server: { token: string };
      sinks: { secret: string; url: string }[];
    };
    expect(effective.server.token).toBe("[redacted]");
    expect(effective.sinks[0]).toMatchObject({ secret: "[redacted]", url: "http://127.0.0.1:9/hook" });
    expect(stdout).not.toContain("e2e-server-token-value");
    expect(stdout).not.toContain(SECRET);
  });

  it("exits 78 naming every bad key (check-config and run)", async () => {
    const work = makeWorkDir();
    writeConfig(work, badConfig);
    for (const command of ["check-config", "run"]) {
      const { exit, stderr } = await run([command, "--config", work.configFile], work.dir);
      expect(exit, command).toEqual({ code: 78, signal: null });
      expect(stderr, command).toContain("server.port: must be an integer");
      expect(stderr, command).toContain("rules[0].treshold: unknown key");
    }
    expect(existsSync(work.stateDir)).toBe(false); // run gave up before touching state
  });
});
