// What the cause-rule cluster suites share: three members sharing synthetic pairs and one webhook sink, and what each
// member published and the receiver accepted.
import type { AlertPayload } from "../../src/domain/events.js";
import type { RunningDaemon } from "../e2e/daemon.js";
import type { WebhookReceiver } from "../e2e/webhook-receiver.js";
import { startClusterMember } from "./member-config.js";
import type { NatsSuite } from "./suite.js";
import { sleep, waitUntil } from "./wait.js";

/** The alerts of `rule` the receiver accepted. */
export function delivered(hook: WebhookReceiver, rule: string): AlertPayload[] {
  return hook.deliveries.items.flatMap((d) =>
    d.answeredStatus < 300 && d.event?.alert.rule === rule ? [d.event.alert] : [],
  );
}

/** The alert events of `rule` a member published to the cluster's log (its stdout sink logs only those). */
export function published(daemon: RunningDaemon, rule: string): AlertPayload[] {
  return daemon.logs.items.flatMap((line) => {
    const alert = line["event"] === "alert" ? (line["alert"] as AlertPayload | undefined) : undefined;
    return alert?.rule === rule ? [alert] : [];
  });
}

/** How the members run: their ids, pairs, period, lease and rules, and the webhook they all notify. */
export interface CauseMembersOptions {
  readonly ids: readonly string[];
  readonly pairs: readonly string[];
  readonly periodMs: number;
  readonly leaseMs: number;
  readonly rules: readonly unknown[];
  readonly hook: WebhookReceiver;
  readonly secret: string;
}

/**
 * Start the members (each through a counting proxy), wait until every pair is polled by some member and the later
 * joiners' handover wait is over; their daemons, and how many pairs each polled in the last 3 s.
 */
export async function startCauseMembers(
  suite: NatsSuite,
  options: CauseMembersOptions,
): Promise<{ readonly members: RunningDaemon[]; readonly shares: number[] }> {
  const { hook, secret, pairs } = options;
  const sink = { kind: "webhook", name: "hook", url: hook.url, secret, failureThreshold: 1000 };
  const members: RunningDaemon[] = [];
  for (const id of options.ids) {
    const started = await startClusterMember(suite.simulatorUrl, suite.proxies, {
      id,
      natsUrls: suite.nats.urls,
      pairs,
      periodMs: options.periodMs,
      leaseMs: options.leaseMs,
      rules: options.rules,
      sinks: [{ ...sink, timeoutMs: 2_000, groupBy: ["..."] }],
    });
    members.push(started.daemon);
  }
  await waitUntil(
    "every pair polled by some member",
    () => pairs.every((pair) => suite.proxies.some((p) => p.requests.some((r) => r.pair === pair))),
    30_000,
  );
  await sleep(options.leaseMs); // settled: the handover wait of the later joiners is over
  const shares = suite.proxies.map(
    (p) => new Set(p.requests.filter((r) => r.atMs > Date.now() - 3_000).map((r) => r.pair)).size,
  );
  return { members, shares };
}
