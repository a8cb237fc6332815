// A price move across a join handover is detected (real processes: nats-server, a simulator, two daemons behind
// counting proxies): the joining member's proxy shows every price 10 % higher, so each pair that moves to it has
// moved by 10 % between its old owner's last poll and its new owner's first. The new owner's price_change window
// reaches back into the old owner's points (carried in the key's handover record) and fires once per moved pair.
// Then the joined member stops (SIGTERM): the pairs move back, 10 % lower, and fire once on the first member.
import { describe, expect, it } from "vitest";
import { syntheticPairIds } from "../../src/simulator/synthetic-pairs.js";
import { startDaemon, type RunningDaemon } from "../e2e/daemon.js";
import { makeWorkDir, writeConfig } from "../e2e/fixtures.js";
import { memberConfig } from "./member-config.js";
import { natsServerAvailable } from "./nats.js";
import { polled, priceChanges, risen } from "./price-moves.js";
import { startCountingProxy, type CountingProxy } from "./proxy.js";
import { useNatsSuite } from "./suite.js";
import { sleep, waitUntil } from "./wait.js";

const PAIRS = syntheticPairIds(8);
const LEASE_MS = 3_000;
const PERIOD_MS = 1_000;
const WINDOW_MS = 10_000;

const available = natsServerAvailable();

interface Member {
  readonly proxy: CountingProxy;
  readonly daemon: RunningDaemon;
}

describe.skipIf(!available)("a price move across a join handover (nats-server, 2 daemons)", () => {
  const suite = useNatsSuite({ simulator: { seed: 11, syntheticPairs: PAIRS.length } });

  /** Start member `id` behind a proxy of its own that applies `rewrite` to pair prices. */
  async function startMember(id: string, rewrite?: (pair: string, body: Buffer) => Buffer): Promise<Member> {
    const proxy = await startCountingProxy(suite.simulatorUrl, rewrite);
    suite.proxies.push(proxy);
    const work = makeWorkDir();
    const rules = [{ kind: "price_change", windowMs: WINDOW_MS, threshold: 0.05 }];
    writeConfig(
      work,
      memberConfig(work, {
        id,
        upstreamUrl: proxy.url,
        natsUrls: suite.nats.urls,
        pairs: PAIRS,
        periodMs: PERIOD_MS,
        leaseMs: LEASE_MS,
        rules,
      }),
    );
    const daemon = await startDaemon(work.configFile, {
      cwd: work.dir,
      simulatorUrl: proxy.url,
      timeoutMs: 30_000,
    });
    return { proxy, daemon };
  }

  it("fires once on the new owner for each pair whose price moved while it changed hands (join, then SIGTERM)", async () => {
    const old = await startMember("w1");
    const startedAtMs = Date.now();
    await waitUntil(
      "every pair polled by w1",
      () => PAIRS.every((p) => polled(old, p, startedAtMs, 1)),
      30_000,
    );
    await sleep(WINDOW_MS + 2 * PERIOD_MS); // w1's history covers the window
    const joined = await startMember("w2", risen);
    const joinedAtMs = Date.now();
    await waitUntil(
      "w2 polling some pairs",
      () => PAIRS.some((p) => polled(joined, p, joinedAtMs, 1)),
      LEASE_MS + 10_000,
    );
    // a detection is due at the new owner's first polls; a late one would come within the window
    await sleep(WINDOW_MS / 2);
    const moved = PAIRS.filter((p) => polled(joined, p, joinedAtMs, 3));
    const kept = PAIRS.filter((p) => !moved.includes(p));
    expect(moved.length).toBeGreaterThan(0);
    expect(kept.length).toBeGreaterThan(0);
    for (const pair of moved) {
      expect({ pair, w2: priceChanges(joined, pair).filter((t) => t !== "resolved/resolved") }).toEqual({
        pair,
        w2: ["firing/first"],
      });
      expect({ pair, w1: priceChanges(old, pair) }).toEqual({ pair, w1: [] });
    }
    for (const pair of kept) expect({ pair, w1: priceChanges(old, pair) }).toEqual({ pair, w1: [] });

    // the moved pairs resolve once w2's window holds only its own prices; then w2 leaves gracefully
    await waitUntil(
      "the moved pairs resolved on w2",
      () => moved.every((pair) => priceChanges(joined, pair).includes("resolved/resolved")),
      2 * WINDOW_MS,
    );
    joined.daemon.signal("SIGTERM");
    const leftAtMs = Date.now();
    await waitUntil(
      "w1 polling the moved pairs again",
      () => moved.every((pair) => polled(old, pair, leftAtMs, 3)),
      LEASE_MS + 10_000,
    );
    await sleep(2 * PERIOD_MS);
    for (const pair of moved)
      expect({ pair, w1: priceChanges(old, pair) }).toEqual({ pair, w1: ["firing/first"] });
  });
});
