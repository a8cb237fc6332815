// Child of the cause bench: three cluster members in one process, in simulated time, each holding its share of the
// targets, its engine fed one poll outcome per target per second, ticked each second, and its cause summaries written
// to and watched in an in-memory KV (the shipped createCauseSummaries). It imports the code under test from the source
// tree given (this one, or an older commit's), so one run measures before and after side by side.
// Args: <root> <mode: time|count> <scenario: failing|healthy|moving> <rounds> <warmSeconds> <measuredSeconds>
import { cpuUsage } from "node:process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Subject } from "rxjs";
import type * as CauseSummariesModule from "../src/cluster/cause-summaries.js";
import type * as CauseSummaryModule from "../src/domain/cause-summary.js";
import type * as CausesModule from "../src/domain/causes.js";
import type * as ConfigModule from "./lib/config.js";
import type * as ErrorsModule from "../src/domain/errors.js";
import type * as MonitorModule from "../src/domain/monitor.js";
import type * as RulesModule from "../src/domain/rules/index.js";
import type * as PairPriceModule from "../src/upstream/pair-price.js";
import type * as TargetsModule from "../src/pipeline/targets.js";
import type * as PairsModule from "../src/simulator/synthetic-pairs.js";
import type { PeerCauses } from "../src/domain/cause-summary.js";
import type { AlertPayload, BusEvent } from "../src/domain/events.js";
import type { PairPrice } from "../src/domain/types.js";
import type { RuleConfig } from "../src/domain/rules/index.js";
import type { MonitorState } from "../src/domain/monitor.js";
import type { TargetSpec } from "../src/domain/types.js";
import { MemoryKv } from "./lib/memory-kv.js";

/**
 * The scenarios: every target failing (HTTP 500 from second 10; `onset` is the same, measured from before the outage
 * through its first seconds), every one healthy, or healthy with a tenth moving +0.5 %/s.
 */
export type Scenario = "failing" | "onset" | "healthy" | "moving";
/** Cluster members, and targets each holds. */
export const MEMBERS = 3;
export const TARGETS_PER_MEMBER = 500;
const OUTAGE_FROM_S = 10;
const BASE_MS = 1_741_594_457_000;

type Offchain = Extract<TargetSpec, { kind: "offchain" }>;

/** The modules of the tree under test. */
interface Tree {
  readonly monitor: typeof MonitorModule;
  readonly summaries: typeof CauseSummariesModule;
  readonly summary: typeof CauseSummaryModule;
  readonly causes: typeof CausesModule;
  readonly errors: typeof ErrorsModule;
  readonly rules: typeof RulesModule;
  readonly pairPrice: typeof PairPriceModule;
  readonly targets: typeof TargetsModule;
  readonly pairs: typeof PairsModule;
  readonly config: typeof ConfigModule;
}

async function loadTree(root: string): Promise<Tree> {
  const load = <M>(path: string): Promise<M> => import(pathToFileURL(join(root, path)).href) as Promise<M>;
  return {
    monitor: await load("src/domain/monitor.ts"),
    summaries: await load("src/cluster/cause-summaries.ts"),
    summary: await load("src/domain/cause-summary.ts"),
    causes: await load("src/domain/causes.ts"),
    errors: await load("src/domain/errors.ts"),
    rules: await load("src/domain/rules/index.ts"),
    pairPrice: await load("src/upstream/pair-price.ts"),
    targets: await load("src/pipeline/targets.ts"),
    pairs: await load("src/simulator/synthetic-pairs.ts"),
    config: await load("bench/lib/config.ts"),
  };
}

/** One member: its engine, its targets, and the summaries' pass (the callback its setInterval would run). */
interface Member {
  state: MonitorState;
  readonly targets: readonly Offchain[];
  pass: () => void;
  stop: () => Promise<void>;
}

/** An 18-decimal price body of the live server's format, decoded as a poll would. */
function priceOf(tree: Tree, pair: string, price: number, atMs: number): PairPrice {
  const raw = `0x${(BigInt(Math.round(price * 1e8)) * 10n ** 10n).toString(16)}`;
  const body = { num_sources_aggregated: 5, pair_id: pair, price: raw, timestamp: atMs, decimals: 18 };
  return tree.pairPrice.decodePairPriceBody(JSON.stringify(body));
}

/** The cluster of one round: members, the shared KV, the cluster's log of cause alerts, and the simulated clock. */
function startCluster(tree: Tree, rules: readonly RuleConfig[], specs: readonly Offchain[]) {
  let nowMs = BASE_MS;
  const kv = new MemoryKv(() => nowMs);
  const events = new Subject<BusEvent>();
  const firing = new Map<string, AlertPayload>();
  const log = {
    events$: events.asObservable(),
    activeAlerts: () => [...firing.values()],
  };
  const views = Array.from({ length: MEMBERS }, (_, m) => ({ memberId: `m${m}`, incarnation: `i${m}` }));
  const silent = { error: () => undefined, warn: () => undefined, info: () => undefined };
  const members: Member[] = [];
  for (let m = 0; m < MEMBERS; m++) {
    const targets = specs.slice(m * TARGETS_PER_MEMBER, (m + 1) * TARGETS_PER_MEMBER);
    const ids = new Set(targets.map((t) => t.id));
    const state = tree.monitor.retainTargets(
      tree.monitor.createMonitorState(),
      ids,
      rules,
      nowMs,
      targets,
    ).state;
    // member 0 owns the `cause:` key: it judges; the others only link their children
    tree.monitor.setClusterCauses(state, {
      judges: m === 0,
      ready: false,
      peers: tree.summary.NO_PEERS,
      firing: new Set(),
    });
    const member: Member = { state, targets, pass: () => undefined, stop: () => Promise.resolve() };
    // the runner as the summaries see it: its engine, and where the peers' part goes (as MonitorRunner.clusterCauses)
    const runner = {
      state: () => member.state,
      clusterCauses(peers: PeerCauses, firingNow: ReadonlySet<string>, ready: boolean) {
        const judges = member.state.cluster?.judges ?? false;
        tree.monitor.setClusterCauses(member.state, { judges, ready, peers, firing: firingNow });
      },
    };
    const summaries = tree.summaries.createCauseSummaries({
      // the bench's stand-ins for NATS, the member, the runner and pino: only what the summaries call
      bucket: () =>
        kv as unknown as NonNullable<ReturnType<CauseSummariesModule.CauseSummariesDeps["bucket"]>>,
      memberId: `m${m}`,
      incarnation: `i${m}`,
      member: { status: () => ({ members: views }), leaseValid: () => true } as never,
      runner: () => runner as never,
      logger: silent as never,
      nowMs: () => nowMs,
      excluded: () => undefined,
    });
    // the pass runs on setInterval: capture its callback to run it once a simulated second
    const setIntervalBefore = globalThis.setInterval;
    globalThis.setInterval = ((callback: () => void) => {
      member.pass = callback;
      return { unref: () => undefined };
    }) as unknown as typeof setInterval;
    summaries.start(log as never, 1_000);
    globalThis.setInterval = setIntervalBefore;
    member.stop = () => summaries.stop();
    members.push(member);
  }
  const publish = (transitions: readonly AlertPayload[]): void => {
    for (const alert of transitions) {
      if (!tree.rules.isCauseKind(alert.rule)) continue;
      if (alert.status === "firing") firing.set(alert.fingerprint, alert);
      else firing.delete(alert.fingerprint);
      events.next({ type: "alert", seq: 0, alert });
    }
  };
  return {
    kv,
    members,
    publish,
    setNow: (ms: number) => {
      nowMs = ms;
    },
  };
}

/** Let the summaries' promises (puts, watch deliveries) settle. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Run `seconds` simulated seconds from second `from`: every member polls each target, ticks, runs its pass. */
async function runSeconds(
  tree: Tree,
  cluster: ReturnType<typeof startCluster>,
  rules: readonly RuleConfig[],
  scenario: Scenario,
  from: number,
  seconds: number,
): Promise<void> {
  const http500 = new tree.errors.PmError("PM_ERR_UPSTREAM_HTTP", "HTTP 500", {
    retryable: true,
    details: { status: 500 },
  });
  for (let s = from; s < from + seconds; s++) {
    const failing = (scenario === "failing" || scenario === "onset") && s >= OUTAGE_FROM_S;
    for (let t = 0; t < TARGETS_PER_MEMBER; t++)
      cluster.members.forEach((member, m) => {
        const target = member.targets[t]!;
        const atMs = BASE_MS + s * 1_000 + ((t * 7 + m * 3) % 1_000);
        cluster.setNow(atMs);
        const moving = scenario === "moving" && t % 10 === 0 && s >= OUTAGE_FROM_S;
        const price = 100 * (1 + (moving ? 0.005 * (s - OUTAGE_FROM_S + 1) : 0.0001 * ((s + t) % 3)));
        const result = failing
          ? { ok: false as const, error: http500 }
          : { ok: true as const, value: priceOf(tree, target.pair, price, atMs) };
        const step = tree.monitor.observe(
          member.state,
          { kind: "offchain", target, result, observedAtMs: atMs },
          rules,
          atMs,
        );
        member.state = step.state;
        if (m === 0) cluster.publish(step.transitions);
      });
    cluster.setNow(BASE_MS + s * 1_000 + 999);
    for (const [m, member] of cluster.members.entries()) {
      const step = tree.monitor.tick(member.state, rules, BASE_MS + s * 1_000 + 999);
      if (m === 0) cluster.publish(step.transitions);
      member.pass();
      await settle();
    }
    await settle();
  }
}

/** The rules: the shipped ones (`causes`), or the shipped ones without the cause rules (`none`: the baseline). */
function rulesOf(tree: Tree, job: "causes" | "none"): readonly RuleConfig[] {
  const shipped = tree.config.benchConfig({}).rules;
  return job === "causes" ? shipped : shipped.filter((rule) => !tree.rules.isCauseKind(rule.kind));
}

/** The off-chain targets: one per synthetic pair, polled every second. */
function specsOf(tree: Tree): Offchain[] {
  const pairs = tree.pairs.syntheticPairIds(MEMBERS * TARGETS_PER_MEMBER);
  const monitors = tree.config.benchConfig({
    monitors: { offchain: tree.config.offchainMonitors(pairs, pairs.length, 1_000) },
  }).monitors;
  return tree.targets.planTargets(monitors).map((plan) => plan.spec as Offchain);
}

/** One round of a job: warm up, then the measured seconds; the CPU ms they took (user + system). */
async function round(
  tree: Tree,
  job: "causes" | "none",
  scenario: Scenario,
  warmSeconds: number,
  measuredSeconds: number,
): Promise<{ cpuMs: number; writes: number }> {
  const specs = specsOf(tree);
  const rules = rulesOf(tree, job);
  const cluster = startCluster(tree, rules, specs);
  await runSeconds(tree, cluster, rules, scenario, 0, warmSeconds);
  const writesBefore = cluster.kv.writes;
  const before = cpuUsage();
  await runSeconds(tree, cluster, rules, scenario, warmSeconds, measuredSeconds);
  const used = cpuUsage(before);
  const writes = cluster.kv.writes - writesBefore;
  for (const member of cluster.members) await member.stop();
  return { cpuMs: (used.user + used.system) / 1_000, writes };
}

/** Time `fn` over `times` calls after as many warm-up calls; ms per call. */
function perCall(times: number, fn: () => unknown): number {
  for (let i = 0; i < times; i++) fn();
  const before = cpuUsage();
  for (let i = 0; i < times; i++) fn();
  const used = cpuUsage(before);
  return (used.user + used.system) / 1_000 / times;
}

/**
 * The parts of the cause path, per call, on member m0 of a warmed-up cluster: its summary and its JSON, the merge of
 * the two peers' summaries, and one cause pass (as a poll or the tick runs it).
 */
async function parts(tree: Tree, scenario: Scenario, warmSeconds: number): Promise<Record<string, number>> {
  const specs = specsOf(tree);
  const rules = rulesOf(tree, "causes");
  const cluster = startCluster(tree, rules, specs);
  await runSeconds(tree, cluster, rules, scenario, 0, warmSeconds);
  const nowMs = BASE_MS + warmSeconds * 1_000;
  const [m0, m1, m2] = cluster.members as [Member, Member, Member];
  const peers = [m1, m2].map((m) => tree.monitor.causeSummary(m.state, nowMs)!);
  const result = {
    summaryMs: perCall(200, () => JSON.stringify(tree.monitor.causeSummary(m0.state, nowMs))),
    mergeMs: perCall(200, () => tree.summary.mergePeerCauses(peers)),
    passMs: perCall(200, () =>
      tree.causes.evaluateCauses(m0.state, m0.state.evaluator.causes, nowMs, [], m0.state.cluster),
    ),
    failingPeers: m0.state.cluster?.peers.failing.length ?? 0,
  };
  for (const member of cluster.members) await member.stop();
  return result;
}

/** `time`: rounds of both jobs, interleaved, CPU ms per simulated second each; `count`: one causes-or-none run. */
async function main(): Promise<void> {
  const [
    root = ".",
    mode = "time",
    scenarioArg = "failing",
    roundsArg = "5",
    warmArg = "20",
    measuredArg = "10",
    job = "causes",
  ] = process.argv.slice(2);
  const scenario = scenarioArg as Scenario;
  const tree = await loadTree(root);
  const warm = Number(warmArg);
  const measured = Number(measuredArg);
  if (mode === "count") {
    await round(tree, job === "none" ? "none" : "causes", scenario, warm, measured);
    return;
  }
  const results: { causes: number[]; none: number[]; writes: number } = { causes: [], none: [], writes: 0 };
  for (let r = 0; r < Number(roundsArg); r++)
    for (const which of r % 2 === 0 ? (["causes", "none"] as const) : (["none", "causes"] as const)) {
      const { cpuMs, writes } = await round(tree, which, scenario, warm, measured);
      results[which].push(cpuMs / measured);
      if (which === "causes") results.writes = writes / measured;
    }
  process.stdout.write(`${JSON.stringify({ ...results, parts: await parts(tree, scenario, warm) })}\n`);
}

await main();
