// Crash consistency: the built daemon is killed with SIGKILL at seeded points and restarted on one state dir; nothing is lost.
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AlertEvent, JournaledEvent } from "../../src/domain/events.js";
import { loadTestConfig, startRecordedApp } from "./support/app.js";
import { ensureBuilt, spawnDaemon, type Daemon } from "./support/daemon.js";
import { checkJournal, readJournal, transitionKey } from "./support/journal-check.js";
import { SEED, budget, randomInt, seededRandom } from "./support/mode.js";
import { reportSuite } from "./support/report.js";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver.js";
import { pollUntil } from "./support/ws-server.js";

const SECRET = "reliability-crash-secret";
const KILLS = budget(3, 10);
const FAULTS_PER_RUN = budget(12, 16);
const PAIRS = ["BTC/USD", "ETH/USD", "SOL/USD", "STRK/USD"];
const START_TIMEOUT_MS = 30_000;
/** Longest a kill trigger waits for its event before killing anyway. */
const TRIGGER_FALLBACK_MS = 8_000;
type Trigger = "timer" | "webhook request" | "WebSocket alert";

describe("crash consistency of the built daemon under kill -9", () => {
  const startedAtMs = Date.now();
  const random = seededRandom(SEED + 3);
  const stateDir = mkdtempSync(join(tmpdir(), "pm-reliability-crash-"));
  const configFile = join(stateDir, "..", `${stateDir.split("/").pop() ?? "crash"}.json`);
  const daemons: Daemon[] = [];
  const sockets: WebSocket[] = [];
  const triggers: Trigger[] = [];
  const seenAfterKills = new Map<number, JournaledEvent>();
  let receiver: WebhookReceiver;
  let built = false;
  let faultsInjected = 0;
  let tornJournalTails = 0;
  let tornOutboxTails = 0;
  /** Per killed run: the seqs it journaled, and the highest seq that reached its outbox (file or receiver). */

  beforeAll(async () => {
    built = ensureBuilt();
    receiver = await startWebhookReceiver(SECRET);
    writeFileSync(
      configFile,
      JSON.stringify({
        upstream: {
          url: "simulator",
          simulator: { seed: SEED, scenario: "", speed: 1 },
          timeoutMs: 400,
          retry: { maxAttempts: 2, baseDelayMs: 20, maxDelayMs: 50, maxElapsedMs: 300 },
        },
        monitors: {
          offchain: PAIRS.map((pair) => ({ pair, periodMs: 150 })),
          onchain: [],
          publishers: [],
          funding: [],
          vaults: [],
          maxBackoffMs: 600,
          warmup: { enabled: false },
        },
        rules: [
          { kind: "price_change", windowMs: 1_500, threshold: 0.02, flapMaxTransitions: 1_000 },
          { kind: "upstream_error", threshold: 2, flapMaxTransitions: 1_000 },
        ],
        sinks: [
          {
            kind: "webhook",
            name: "hook",
            url: receiver.url,
            secret: SECRET,
            minSeverity: "info",
            ratePerMinute: 6_000,
            burst: 1_000,
            timeoutMs: 2_000,
            // grouped, with short timers: group notifications and their state must survive kill -9 too
            groupBy: [],
            groupWaitMs: 200,
            groupIntervalMs: 500,
          },
        ],
        log: { level: "info" },
        shutdown: { drainTimeoutMs: 5_000 },
      }),
    );
  }, 240_000);

  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.terminate();
    for (const daemon of daemons) daemon.kill("SIGKILL");
  });

  afterAll(async () => {
    for (const daemon of daemons) daemon.kill("SIGKILL");
    await Promise.all(daemons.map((d) => d.exited));
    await receiver?.close();
  });

  const start = async (): Promise<{ daemon: Daemon; port: number; simUrl: string }> => {
    const daemon = spawnDaemon([
      "--config",
      configFile,
      "--set",
      "server.port=0",
      "--set",
      `state.dir=${stateDir}`,
    ]);
    daemons.push(daemon);
    const sim = await daemon.line("embedded simulator started", START_TIMEOUT_MS);
    const started = await daemon.line("pragma-monitor started", START_TIMEOUT_MS);
    return { daemon, port: Number(started["port"]), simUrl: String(sim["url"]) };
  };

  /** A seeded burst of spikes and outages, scheduled through the simulator's control endpoint. */
  const injectFaults = async (simUrl: string): Promise<void> => {
    for (let i = 0; i < FAULTS_PER_RUN; i++) {
      const pair = PAIRS[randomInt(random, 0, PAIRS.length - 1)] ?? "BTC/USD";
      const up = random() < 0.5;
      const fault =
        random() < 0.65
          ? { kind: "spike", pair, factor: up ? 1.04 + random() * 0.05 : 0.91 + random() * 0.05 }
          : {
              kind: "outage",
              status: [500, 503, 429][randomInt(random, 0, 2)],
              endpoint: "pair_price",
              pair,
              retryAfterS: 0,
            };
      const res = await fetch(`${simUrl}/_sim/faults`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          fault,
          delayMs: randomInt(random, 1_000, 3_000), // after the price windows have history
          durationMs: randomInt(random, 400, 1_200),
        }),
      });
      expect(res.status, await res.text()).toBe(201);
      faultsInjected += 1;
    }
  };

  /** Resolve at the seeded kill point of this run. */
  const killPoint = (trigger: Trigger, port: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const fallback = setTimeout(
        resolve,
        trigger === "timer" ? randomInt(random, 1_500, 5_000) : TRIGGER_FALLBACK_MS,
      );
      const fire = (): void => {
        clearTimeout(fallback);
        resolve();
      };
      if (trigger === "webhook request") {
        // kill while the receiver holds the request: accepted but not yet acknowledged to the daemon
        let left = randomInt(random, 2, 5);
        receiver.onReceive = () => {
          left -= 1;
          if (left === 0) fire();
        };
      } else if (trigger === "WebSocket alert") {
        // kill the moment a transition is visible: journaled and published, its delivery just starting
        let left = randomInt(random, 2, 4);
        const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`);
        sockets.push(socket);
        socket.on("error", () => undefined);
        socket.on("open", () => socket.send(JSON.stringify({ op: "subscribe", channels: ["alerts"] })));
        socket.on("message", (data: Buffer) => {
          if ((JSON.parse(data.toString("utf8")) as { type: string }).type !== "alert") return;
          left -= 1;
          if (left === 0) fire();
        });
      }
    });

  /** State files must be readable after any kill: only a torn last line is tolerated. */
  const checkStateFiles = (): void => {
    const journal = readJournal(join(stateDir, "journal.jsonl"));
    expect(journal.badLines).toBe(0);
    tornJournalTails += journal.tornTail;
    for (const event of journal.events) seenAfterKills.set(event.seq, event);
    const checkpoint = join(stateDir, "alerts.json");
    if (existsSync(checkpoint))
      expect(() => JSON.parse(readFileSync(checkpoint, "utf8")) as unknown).not.toThrow();
    const outbox = join(stateDir, "outbox", "hook.jsonl");
    if (existsSync(outbox)) {
      const lines = readFileSync(outbox, "utf8").split("\n");
      lines.forEach((line, i) => {
        if (line === "") return;
        try {
          JSON.parse(line);
        } catch (error) {
          if (i !== lines.length - 1) throw error;
          tornOutboxTails += 1;
        }
      });
    }
  };

  it("a transition journaled but not yet in the outbox when the process dies is delivered after restart", async () => {
    // The exact state kill -9 leaves between the journal write (sync, event-hub.ts emit → persist) and the
    // outbox append (async group commit, outbox.ts append): the event is in journal.jsonl, not in the outbox.
    // At start each sink replays the journal after its outbox's high-water mark, so it is delivered.
    const bugReceiver = await startWebhookReceiver(SECRET);
    const config = loadTestConfig({
      upstream: { url: "simulator", simulator: { seed: SEED, scenario: "", speed: 1 } },
      monitors: {
        offchain: [{ pair: "BTC/USD", periodMs: 150 }],
        onchain: [],
        publishers: [],
        funding: [],
        vaults: [],
        warmup: { enabled: false },
      },
      rules: [{ kind: "price_change", windowMs: 1_500, threshold: 0.02 }],
      sinks: [{ kind: "webhook", name: "hook", url: bugReceiver.url, secret: SECRET, minSeverity: "info" }],
      server: { port: 0 },
    });
    const first = await startRecordedApp(config, seededRandom(SEED));
    await first.stop();
    const lastSeq = Math.max(
      ...readJournal(join(config.state.dir, "journal.jsonl")).events.map((e) => e.seq),
    );
    const orphan: AlertEvent = {
      type: "alert",
      seq: lastSeq + 1,
      alert: {
        fingerprint: "0c0ffee0c0ffee00",
        status: "firing",
        rule: "price_change",
        severity: "critical",
        labels: { pair: "ETH/USD", market: "offchain", entry_type: "spot", window: "1min" },
        summary: "ETH/USD moved +5.00% in 1min (threshold 2%)",
        value: 0.05,
        threshold: 0.02,
        startsAt: new Date().toISOString(),
        endsAt: null,
        reason: "first",
        context: {},
      },
    };
    appendFileSync(join(config.state.dir, "journal.jsonl"), `${JSON.stringify(orphan)}\n`);
    const receivedBefore = bugReceiver.raw.length;
    const second = await startRecordedApp(config, seededRandom(SEED));
    try {
      // a later transition: the outbox is FIFO, so once it arrives the orphan would have been sent first
      const res = await fetch(`${second.app.upstreamUrl()}/_sim/faults`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ fault: { kind: "spike", pair: "BTC/USD", factor: 1.08 } }),
      });
      expect(res.status).toBe(201);
      await bugReceiver.changed.until(
        () => bugReceiver.raw.slice(receivedBefore).some((t) => t.seq > orphan.seq),
        "a transition after the orphan",
        20_000,
      );
    } finally {
      await second.stop();
      await bugReceiver.close();
    }
    const delivered = bugReceiver.raw.slice(receivedBefore).map((t) => t.seq);
    expect(delivered).toContain(orphan.seq);
  });

  it("stays consistent across seeded kill -9 restarts and delivers every journaled transition", async () => {
    for (let k = 0; k < KILLS; k++) {
      const trigger = (["timer", "webhook request", "WebSocket alert"] as const)[k % 3] ?? "timer";
      const { daemon, port, simUrl } = await start();
      const kill = killPoint(trigger, port);
      await injectFaults(simUrl);
      await kill;
      daemon.kill("SIGKILL");
      receiver.onReceive = undefined;
      expect((await daemon.exited).signal).toBe("SIGKILL");
      for (const socket of sockets.splice(0)) socket.terminate();
      triggers.push(trigger);
      checkStateFiles();
    }

    // the last run drains the outboxes, then stops gracefully
    const { daemon, port } = await start();
    let outboxSize = Number.NaN;
    await pollUntil(
      () => outboxSize === 0,
      "the outbox to drain after the last restart",
      30_000,
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        const match = /^pragma_monitor_sink_outbox_messages\{sink="hook"\} (\d+)$/m.exec(text);
        outboxSize = match === null ? Number.NaN : Number(match[1]);
      },
    );
    daemon.kill("SIGTERM");
    expect((await daemon.exited).code).toBe(0);

    const journal = readJournal(join(stateDir, "journal.jsonl"));
    expect(journal.badLines + journal.tornTail).toBe(0);
    const { problems, summary } = checkJournal(journal.events);
    expect(problems).toEqual([]);
    const finalSeqs = new Set(journal.events.map((e) => e.seq));
    const droppedFromJournal = [...seenAfterKills.keys()].filter((seq) => !finalSeqs.has(seq));
    expect(droppedFromJournal).toEqual([]);
    const starts = journal.events.filter((e) => e.type === "lifecycle" && e.event === "started").length;
    expect(starts).toBe(KILLS + 1);

    const transitions = journal.events.filter(
      (e): e is AlertEvent =>
        e.type === "alert" && !(e.alert.rule === "sink_error" && e.alert.labels["sink"] === "hook"),
    );
    const journaledKeys = new Set(transitions.map(transitionKey));
    const received = receiver.uniqueKeys();
    const lost = transitions.filter((e) => !received.has(transitionKey(e)));
    const phantom = [...received].filter((key) => !journaledKeys.has(key));
    const idsPerKey = new Map<string, Set<string>>();
    for (const t of receiver.raw) {
      const key = `${t.seq}:${t.status}`;
      idsPerKey.set(key, (idsPerKey.get(key) ?? new Set()).add(t.deliveryId));
    }
    const resentAsNewMessage = [...idsPerKey.values()].filter((ids) => ids.size > 1).length;

    const outboxDir = join(stateDir, "outbox");
    const outboxFiles = readdirSync(outboxDir);
    const live = new Set<string>();
    for (const line of readFileSync(join(outboxDir, "hook.jsonl"), "utf8").split("\n")) {
      if (line === "") continue;
      // a tombstone is {"ack":"<id>"}, or {"ack":[ids],"state":…} with the group state (docs/webhooks.md)
      const record = JSON.parse(line) as { id?: string; ack?: string | string[] };
      if (record.ack !== undefined) for (const id of [record.ack].flat()) live.delete(id);
      else if (record.id !== undefined) live.add(record.id);
    }
    const checkpoint = JSON.parse(readFileSync(join(stateDir, "alerts.json"), "utf8")) as { lastSeq: number };

    const report = reportSuite(
      "crash-consistency",
      `built daemon, kill -9 ×${KILLS} on one state dir`,
      startedAtMs,
      {
        "kill -9 restarts": KILLS,
        "faults injected (simulator control endpoint)": faultsInjected,
        "journal events": summary.events,
        "alert transitions journaled": summary.alertTransitions,
        "transitions for the webhook": transitions.length,
        "delivered (raw requests' transitions)": receiver.raw.length,
        "delivered (deduped by seq + status)": received.size,
        "at-least-once duplicates (same X-Pragma-Delivery)": receiver.raw.length - received.size,
        "re-sent as a new message (different delivery id)": resentAsNewMessage,
        "torn journal tails after a kill": tornJournalTails,
        "torn outbox tails after a kill": tornOutboxTails,
        lost: lost.length,
      },
      [
        `kill points: ${triggers.join(", ")}${built ? "; dist was stale and rebuilt first" : ""}`,
        ...(lost.length > 0
          ? [`undelivered: ${lost.map((e) => `${e.seq}:${e.alert.status} ${e.alert.rule}`).join(", ")}`]
          : []),
      ],
    );
    expect(phantom).toEqual([]);
    expect(resentAsNewMessage).toBe(0);
    expect(live.size).toBe(0);
    expect(outboxFiles.filter((name) => name.includes(".corrupt-"))).toEqual([]);
    expect(checkpoint.lastSeq).toBeLessThanOrEqual(Math.max(...finalSeqs));
    expect(report.counts["lost"], JSON.stringify(lost.map(transitionKey))).toBe(0);
  });
});
