// Upstream faults against the in-process app: every fault raises and resolves upstream_error, nothing lost or duplicated.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AlertEvent } from "../../src/domain/events.js";
import { startSimulator, type RunningSimulator } from "../../src/simulator/index.js";
import { startRecordedApp, loadTestConfig, type RecordedApp } from "./support/app.js";
import { checkJournal, readJournal } from "./support/journal-check.js";
import { SEED, budget, seededRandom } from "./support/mode.js";
import { reportSuite } from "./support/report.js";
import { startResetProxy, type ResetProxy } from "./support/reset-proxy.js";

const PAIRS = ["BTC/USD", "ETH/USD", "SOL/USD", "STRK/USD"] as const;
type Pair = (typeof PAIRS)[number];
const TIMEOUT_MS = 400;
const ROUNDS = budget(1, 3);
const WAIT_MS = 20_000;

/** A fault phase: how to break one pair (or every connection) and the error codes it must produce. */
interface Phase {
  readonly name: string;
  readonly fault: Record<string, unknown> | "reset";
  readonly codes: readonly string[];
}

const PHASES: readonly Phase[] = [
  { name: "outage 500", fault: { kind: "outage", status: 500 }, codes: ["PM_ERR_UPSTREAM_HTTP"] },
  {
    name: "outage 503 + Retry-After",
    fault: { kind: "outage", status: 503, retryAfterS: 1 },
    codes: ["PM_ERR_UPSTREAM_HTTP"],
  },
  {
    name: "429 storm + Retry-After",
    fault: { kind: "outage", status: 429, retryAfterS: 1 },
    codes: ["PM_ERR_UPSTREAM_HTTP", "PM_ERR_UPSTREAM_RATE_LIMITED"],
  },
  {
    name: "latency beyond the timeout",
    fault: { kind: "latency", latencyMs: TIMEOUT_MS * 3 },
    codes: ["PM_ERR_UPSTREAM_TIMEOUT"],
  },
  { name: "malformed body", fault: { kind: "malformed" }, codes: ["PM_ERR_UPSTREAM_DECODE"] },
  {
    name: "truncated body (connection destroyed)",
    fault: { kind: "truncated" },
    codes: ["PM_ERR_UPSTREAM_NETWORK", "PM_ERR_UPSTREAM_DECODE"],
  },
  { name: "connection resets (RST)", fault: "reset", codes: ["PM_ERR_UPSTREAM_NETWORK"] },
];

describe("upstream faults against the in-process app", () => {
  const startedAtMs = Date.now();
  const random = seededRandom(SEED);
  let sim: RunningSimulator;
  let proxy: ResetProxy;
  let run: RecordedApp;
  const injected: string[] = [];
  const observedCodes = new Map<string, Set<string>>();
  let latencyTicks = 0;

  beforeAll(async () => {
    sim = await startSimulator({ seed: SEED });
    proxy = await startResetProxy(sim.port);
    const config = loadTestConfig({
      upstream: {
        url: proxy.url,
        timeoutMs: TIMEOUT_MS,
        connections: 4,
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
        // flap damping would (rightly) hold an alert firing after many flips; this suite flips on purpose
        { kind: "price_change", windowMs: 2_000, threshold: 0.03, flapMaxTransitions: 1_000 },
        { kind: "upstream_error", threshold: 3, flapMaxTransitions: 1_000 },
      ],
      server: { port: 0 },
    });
    run = await startRecordedApp(config, random);
  });

  afterAll(async () => {
    await run?.stop();
    await proxy?.close();
    await sim?.close();
  });

  const control = async (method: "POST" | "DELETE", path: string, body?: unknown): Promise<string> => {
    const res = await fetch(`${sim.url}/_sim/faults${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`control ${method} ${path}: ${res.status} ${text}`);
    return text === "" ? "" : (JSON.parse(text) as { id: string }).id;
  };
  const isFor = (event: AlertEvent, rule: string, pair: Pair): boolean =>
    event.alert.rule === rule &&
    (event.alert.labels["pair"] === pair || (event.alert.labels["endpoint"] ?? "").includes(`:${pair}:`));
  const countOf = (rule: string, pair: Pair, status: string): number =>
    run.alerts().filter((e) => isFor(e, rule, pair) && e.alert.status === status).length;
  const waitFor = (rule: string, pair: Pair, status: string, count: number, what: string): Promise<void> =>
    run.changed.until(
      () => countOf(rule, pair, status) >= count,
      `${what}: ${rule} ${status} on ${pair}`,
      WAIT_MS,
    );

  it("raises and resolves upstream_error for every fault kind without crashing", async () => {
    await run.changed.until(
      () => PAIRS.every((pair) => (run.ticks.get(pair) ?? 0) >= 2),
      "first prices",
      WAIT_MS,
    );
    for (let round = 0; round < ROUNDS; round++) {
      for (const phase of PHASES) {
        const pair = PAIRS[Math.floor(random() * PAIRS.length)] ?? "BTC/USD";
        const affected: readonly Pair[] = phase.fault === "reset" ? PAIRS : [pair];
        const firedBefore = affected.map((p) => countOf("upstream_error", p, "firing"));
        const resolvedBefore = affected.map((p) => countOf("upstream_error", p, "resolved"));
        let faultId = "";
        if (phase.fault === "reset") proxy.setMode("reset");
        else faultId = await control("POST", "", { fault: { ...phase.fault, endpoint: "pair_price", pair } });
        injected.push(phase.name);
        await Promise.all(
          affected.map((p, i) =>
            waitFor("upstream_error", p, "firing", (firedBefore[i] ?? 0) + 1, phase.name),
          ),
        );
        if (phase.fault === "reset") proxy.setMode("pass");
        else await control("DELETE", `/${faultId}`);
        await Promise.all(
          affected.map((p, i) =>
            waitFor("upstream_error", p, "resolved", (resolvedBefore[i] ?? 0) + 1, phase.name),
          ),
        );
        for (const p of affected) {
          const firing = run
            .alerts()
            .filter((e) => isFor(e, "upstream_error", p) && e.alert.status === "firing")
            .at(-1);
          const code = String(firing?.alert.context["lastErrorCode"]);
          expect(phase.codes, `${phase.name} on ${p}`).toContain(code);
          const codes = observedCodes.get(phase.name) ?? new Set<string>();
          observedCodes.set(phase.name, codes.add(code));
        }
      }
    }
  });

  it("does not alert on a latency spike below the timeout", async () => {
    const pair: Pair = "ETH/USD";
    const firedBefore = countOf("upstream_error", pair, "firing");
    const ticksBefore = run.ticks.get(pair) ?? 0;
    const id = await control("POST", "", {
      fault: { kind: "latency", latencyMs: TIMEOUT_MS / 3, endpoint: "pair_price", pair },
    });
    injected.push("latency spike below the timeout");
    await run.changed.until(
      () => (run.ticks.get(pair) ?? 0) >= ticksBefore + 8,
      "slow polls succeed",
      WAIT_MS,
    );
    await control("DELETE", `/${id}`);
    latencyTicks = (run.ticks.get(pair) ?? 0) - ticksBefore;
    expect(countOf("upstream_error", pair, "firing")).toBe(firedBefore);
  });

  it("fires and resolves price_change on a price spike", async () => {
    const pair: Pair = "SOL/USD";
    const before = countOf("price_change", pair, "resolved");
    const id = await control("POST", "", { fault: { kind: "spike", pair, factor: 1.08 } });
    injected.push("price spike");
    await waitFor("price_change", pair, "firing", before + 1, "spike");
    await control("DELETE", `/${id}`);
    // the drop back is a move too; the alert resolves once the window holds stable prices again
    await run.changed.until(
      () => countOf("price_change", pair, "resolved") === countOf("price_change", pair, "firing"),
      "price_change resolved",
      WAIT_MS,
    );
  });

  it("journals exactly what the bus published, consistently, and counts the failures", async () => {
    const healthz = await fetch(`http://127.0.0.1:${run.port}/healthz`);
    expect(healthz.status).toBe(200);
    const metricsText = await (await fetch(`http://127.0.0.1:${run.port}/metrics`)).text();
    await run.stop();

    const journal = readJournal(join(run.config.state.dir, "journal.jsonl"));
    expect(journal.badLines + journal.tornTail).toBe(0);
    const { problems, summary } = checkJournal(journal.events);
    expect(problems).toEqual([]);
    // nothing lost, nothing duplicated: the file holds exactly the published sequence
    expect(journal.events.map((e) => e.seq)).toEqual(run.journaled.map((e) => e.seq));
    expect(journal.events).toEqual(run.journaled);

    const failures = await run.app.metrics.pollFailures.get();
    const byCode = new Map<string, number>();
    for (const value of failures.values)
      byCode.set(String(value.labels.code), (byCode.get(String(value.labels.code)) ?? 0) + value.value);
    for (const codes of observedCodes.values())
      for (const code of codes) expect(byCode.get(code) ?? 0, code).toBeGreaterThan(0);
    const totalFailures = [...byCode.values()].reduce((a, b) => a + b, 0);
    const inhibitingFirings = run
      .alerts()
      .filter((e) => e.alert.rule === "upstream_error" && e.alert.status === "firing");
    // each firing needed `threshold` consecutive failed polls
    expect(totalFailures).toBeGreaterThanOrEqual(inhibitingFirings.length * 3);
    const requests = await run.app.metrics.upstreamRequests.get();
    const statusCount = (status: string): number =>
      requests.values.filter((v) => v.labels.status === status).reduce((a, v) => a + v.value, 0);
    for (const status of ["500", "503", "429"]) expect(statusCount(status), status).toBeGreaterThan(0);
    expect(metricsText).toContain("pragma_monitor_poll_failures_total");
    const burstWarnings = run.logs.filter((line) => line["msg"] === "poll failed").length;
    expect(burstWarnings).toBeLessThan(totalFailures);

    const upstreamResolved = run
      .alerts()
      .filter((e) => e.alert.rule === "upstream_error" && e.alert.status === "resolved").length;
    const report = reportSuite(
      "upstream-faults",
      "simulator and proxy faults against the in-process app",
      startedAtMs,
      {
        "faults injected": injected.length,
        "connections reset by the proxy": proxy.resets,
        "polls failed (metric)": totalFailures,
        "upstream HTTP 500/503/429 answers (metric)":
          statusCount("500") + statusCount("503") + statusCount("429"),
        "poll-failure warnings logged (once per burst)": burstWarnings,
        "upstream_error fired": inhibitingFirings.length,
        "upstream_error resolved": upstreamResolved,
        "successful polls during a sub-timeout latency spike": latencyTicks,
        "alert transitions journaled": summary.alertTransitions,
        "journal events checked": summary.events,
        lost: run.journaled.length - journal.events.length,
        duplicated: journal.events.length - new Set(journal.events.map((e) => e.seq)).size,
      },
      [...observedCodes].map(([phase, codes]) => `${phase}: ${[...codes].join(", ")}`),
    );
    expect(report.counts["lost"]).toBe(0);
    expect(upstreamResolved).toBe(inhibitingFirings.length);
  });
});
