// The README's cluster deployment as shipped in deploy/cluster/: three nats-servers started from its nats-server.conf
// with its env example, and members whose cluster mode comes only from its pragma-monitor env example. Only the
// host-specific values (ports, store dirs, routes, member ids) are replaced, by loopback ones.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENTS_STREAM } from "../../src/cluster/journal-stream.js";
import { loadConfig } from "../../src/config/load.js";
import { syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
import {
  ROOT,
  ensureBuilt,
  killAllDaemons,
  startDaemon,
  startSimulatorProcess,
  type RunningDaemon,
} from "../e2e/daemon.js";
import { makeWorkDir, removeWorkDirs, writeConfig } from "../e2e/fixtures.js";
import { memberConfig } from "./member-config.js";
import { natsServerAvailable, startNatsFromConfig, type NatsCluster } from "./nats.js";
import { sleep } from "./wait.js";

const DEPLOY = join(ROOT, "deploy", "cluster");
const PAIRS = syntheticPairIds(30);

/** `KEY=value` lines of an env file (comments and blank lines skipped). */
function readEnvFile(path: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (match !== null) env[match[1] ?? ""] = match[2] ?? "";
  }
  return env;
}

const natsExample = readEnvFile(join(DEPLOY, "nats-server.env.example"));
const memberExample = readEnvFile(join(DEPLOY, "pragma-monitor.env.example"));

/** Targets member `daemon` owns now, from its /metrics. */
async function ownedTargets(daemon: RunningDaemon): Promise<number> {
  const text = await (await fetch(`${daemon.httpUrl}/metrics`)).text();
  const match = /^pragma_monitor_cluster_owned_targets (\d+)$/m.exec(text);
  return match === null ? -1 : Number(match[1]);
}

describe("the shipped cluster example's member env turns cluster mode on over the production example", () => {
  it("three replicated NATS servers, the experimental flag, a member id and NATS credentials", () => {
    const env = {
      ...memberExample,
      SLACK_WEBHOOK_URL: "http://127.0.0.1:9/x",
      PAGERDUTY_ROUTING_KEY: "0123456789abcdef0123456789abcdef",
    };
    const { config } = loadConfig({ env, cwd: ROOT, configFile: "config/production.example.json" });
    expect(config.cluster).toMatchObject({
      nats: { replicas: 3, user: "pragma", password: natsExample["NATS_PASSWORD"] },
      memberId: "member-1",
      experimental: true,
    });
    expect(config.cluster.nats.servers).toHaveLength(3);
  });
});

describe.skipIf(!natsServerAvailable())("the shipped cluster example (3 nats-servers, 3 members)", () => {
  let nats: NatsCluster;
  const members: RunningDaemon[] = [];

  beforeAll(async () => {
    ensureBuilt();
    const replaced = new Set<string>();
    nats = await startNatsFromConfig(join(DEPLOY, "nats-server.conf"), (node, all) => {
      const local: Record<string, string> = {
        NATS_NAME: node.name,
        NATS_HOST: "127.0.0.1",
        NATS_PORT: String(node.clientPort),
        NATS_CLUSTER_PORT: String(node.clusterPort),
        NATS_STORE_DIR: node.storeDir,
        ...Object.fromEntries(
          all.map((n, i) => [`NATS_ROUTE_${i + 1}`, `nats-route://127.0.0.1:${n.clusterPort}`]),
        ),
      };
      for (const key of Object.keys(local)) replaced.add(key);
      return { ...natsExample, ...local };
    });
    // every value of the example but the password is this host's: a new one must be thought about here
    expect(Object.keys(natsExample).filter((key) => !replaced.has(key))).toEqual(["NATS_PASSWORD"]);
    const simulator = await startSimulatorProcess(makeWorkDir().dir, { syntheticPairs: PAIRS.length });
    for (const id of ["member-1", "member-2", "member-3"]) {
      const work = makeWorkDir();
      const { cluster: _fromEnv, ...config } = memberConfig(work, {
        id,
        upstreamUrl: simulator.url,
        natsUrls: [],
        pairs: PAIRS,
        periodMs: 1_000,
        leaseMs: 10_000,
        rules: [],
      });
      writeConfig(work, config);
      const env = {
        ...memberExample,
        PM_CLUSTER_NATS_SERVERS: nats.urls.join(","),
        PM_CLUSTER_MEMBER_ID: id,
      };
      members.push(
        await startDaemon(work.configFile, {
          cwd: work.dir,
          env,
          simulatorUrl: simulator.url,
          timeoutMs: 30_000,
        }),
      );
    }
  }, 120_000);

  afterAll(async () => {
    await killAllDaemons();
    await nats?.close();
    removeWorkDirs();
  });

  it("forms a JetStream cluster whose event log has 3 replicas, refuses a client without the password, and the members share every target", async () => {
    await expect(connect({ servers: [...nats.urls], reconnect: false })).rejects.toThrow(/auth/i);
    const nc = await connect({
      servers: [...nats.urls],
      user: "pragma",
      pass: natsExample["NATS_PASSWORD"] ?? "",
    });
    try {
      const info = await (await jetstreamManager(nc)).streams.info(EVENTS_STREAM);
      expect(info.config.num_replicas).toBe(3);
      expect(info.cluster?.replicas).toHaveLength(2);
    } finally {
      await nc.close();
    }
    const deadline = Date.now() + 30_000;
    let owned = await Promise.all(members.map(ownedTargets));
    while (!(owned.every((n) => n > 0) && owned.reduce((a, b) => a + b, 0) === PAIRS.length)) {
      if (Date.now() > deadline) throw new Error(`targets owned per member: ${owned.join(", ")}`);
      await sleep(250);
      owned = await Promise.all(members.map(ownedTargets));
    }
  }, 60_000);
});
