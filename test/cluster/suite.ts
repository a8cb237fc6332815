// The fixture of every real-process cluster suite: its nats-server (and, for suites of daemons, the built daemon and a
// simulator process), started before the suite's tests and torn down after them with whatever the suite registered.
import { afterAll, beforeAll } from "vitest";
import { ensureBuilt, killAllDaemons, startSimulatorProcess } from "../e2e/daemon.js";
import { makeWorkDir, removeWorkDirs } from "../e2e/fixtures.js";
import { startNats, type NatsCluster } from "./nats.js";
import type { CountingProxy } from "./proxy.js";

/** What a suite needs besides its nats-server. */
export interface NatsSuiteOptions {
  /** nats-server nodes: 1, or a cluster routed over loopback (default 1). */
  readonly nodes?: number;
  /** Daemons as child processes: build them first, kill them and remove their work dirs at the end. */
  readonly daemons?: boolean;
  /** A simulator process serving `syntheticPairs` pairs (implies `daemons`). */
  readonly simulator?: { readonly seed: number; readonly syntheticPairs: number };
}

/** Anything the suite closes at its end. */
interface Closable {
  close(): Promise<void> | void;
}

/** The running suite (its fields are read inside tests and hooks, once the fixture started). */
export interface NatsSuite {
  readonly nats: NatsCluster;
  /** The simulator's base URL (only with `simulator`). */
  readonly simulatorUrl: string;
  /** Counting proxies the suite's members poll through, closed at the end. */
  readonly proxies: CountingProxy[];
  /** Close `resource` at the end: after the daemons are killed, before nats-server stops. */
  closeAtEnd<T extends Closable>(resource: T): T;
}

/** How long starting a suite may take (building the daemon included). */
const START_TIMEOUT_MS = 180_000;

/** Register the suite's beforeAll and afterAll (call it inside its `describe`) and return the suite. */
export function useNatsSuite(options: NatsSuiteOptions = {}): NatsSuite {
  const daemons = options.daemons === true || options.simulator !== undefined;
  const closables: Closable[] = [];
  let nats: NatsCluster | undefined;
  let simulatorUrl: string | undefined;
  const suite: NatsSuite = {
    get nats() {
      if (nats === undefined) throw new Error("nats-server is not started yet");
      return nats;
    },
    get simulatorUrl() {
      if (simulatorUrl === undefined)
        throw new Error("the suite has no simulator (or it is not started yet)");
      return simulatorUrl;
    },
    proxies: [],
    closeAtEnd(resource) {
      closables.push(resource);
      return resource;
    },
  };
  beforeAll(async () => {
    if (daemons) ensureBuilt();
    nats = await startNats(options.nodes ?? 1);
    const { simulator } = options;
    if (simulator !== undefined)
      simulatorUrl = (await startSimulatorProcess(makeWorkDir().dir, simulator)).url;
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    if (daemons) await killAllDaemons();
    await Promise.all(suite.proxies.splice(0).map((proxy) => proxy.close()));
    for (const resource of closables.splice(0)) await resource.close();
    await nats?.close();
    if (daemons) removeWorkDirs();
  });
  return suite;
}
