// Test harness: a real prometheus-alertmanager (free loopback port, temp storage, gossip off) behind a recording
// proxy, notifying an in-process webhook receiver; skipped loudly when the binary is missing.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./nats.js";
import { sleep } from "./wait.js";

/** The env variable that turns a missing Alertmanager into a failure (set by .ci/run). */
export const REQUIRE_ALERTMANAGER_ENV = "PM_TEST_REQUIRE_ALERTMANAGER";
/** Where Debian's prometheus-alertmanager package installs it (it is not on PATH under that name elsewhere). */
const ALERTMANAGER_BIN = "/usr/bin/prometheus-alertmanager";

/** Whether Alertmanager can run; without it the suite skips (loudly), or fails under REQUIRE_ALERTMANAGER_ENV. */
export function alertmanagerAvailable(): boolean {
  if (spawnSync(ALERTMANAGER_BIN, ["--version"], { encoding: "utf8" }).status === 0) return true;
  const message = `${ALERTMANAGER_BIN} not found: the Alertmanager suite needs it (Debian/Ubuntu: apt-get install prometheus-alertmanager)`;
  if (process.env[REQUIRE_ALERTMANAGER_ENV] === "1")
    throw new Error(`${message}; ${REQUIRE_ALERTMANAGER_ENV}=1 makes this a failure`);
  console.warn(`SKIPPING the Alertmanager suite: ${message}`);
  return false;
}

/** One postable alert as a daemon POSTed it to /api/v2/alerts. */
export interface PostedAlert {
  readonly labels: Readonly<Record<string, string>>;
  readonly endsAt?: string;
}

/** One POST to /api/v2/alerts, when the proxy received it (ms since epoch). */
export interface Post {
  readonly atMs: number;
  readonly alerts: readonly PostedAlert[];
}

/** One notification Alertmanager sent its webhook receiver (its webhook payload, version 4). */
export interface Notification {
  readonly atMs: number;
  readonly status: "firing" | "resolved";
  readonly alerts: readonly { readonly status: string; readonly labels: Readonly<Record<string, string>> }[];
}

/** A running Alertmanager: `url` is the recording proxy a sink posts to. */
export interface RunningAlertmanager {
  readonly url: string;
  readonly posts: Post[];
  readonly notifications: Notification[];
  close(): Promise<void>;
}

/** Alertmanager's timings: notify within a second, never repeat an unchanged group within a test. */
export interface AlertmanagerTimings {
  readonly groupWaitMs: number;
  readonly groupIntervalMs: number;
}

/** Start Alertmanager notifying a webhook receiver of every group (resolves too), behind a recording proxy. */
export async function startAlertmanager(timings: AlertmanagerTimings): Promise<RunningAlertmanager> {
  const notifications: Notification[] = [];
  const posts: Post[] = [];
  const receiver = await listen((body) => {
    notifications.push({ ...(JSON.parse(body) as Omit<Notification, "atMs">), atMs: Date.now() });
  });
  const dir = mkdtempSync(join(tmpdir(), "pm-alertmanager-"));
  const port = await freePort();
  const amUrl = `http://127.0.0.1:${port}`;
  writeFileSync(
    join(dir, "alertmanager.yml"),
    [
      "route:",
      "  receiver: hook",
      "  group_by: [alertname, pair]",
      `  group_wait: ${timings.groupWaitMs}ms`,
      `  group_interval: ${timings.groupIntervalMs}ms`,
      "  repeat_interval: 1h",
      "receivers:",
      "  - name: hook",
      "    webhook_configs:",
      `      - url: ${receiver.url}/hook`,
      "        send_resolved: true",
      "",
    ].join("\n"),
  );
  const child = spawn(
    ALERTMANAGER_BIN,
    [
      `--config.file=${join(dir, "alertmanager.yml")}`,
      `--storage.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--cluster.listen-address=",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let output = "";
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await waitReady(amUrl, child, () => output);
  const proxy = await listen(
    (body) => posts.push({ atMs: Date.now(), alerts: JSON.parse(body) as PostedAlert[] }),
    amUrl,
  );
  return {
    url: proxy.url,
    posts,
    notifications,
    async close() {
      await Promise.all([proxy.close(), receiver.close(), stop(child)]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An HTTP server on a free loopback port that hands each request body to `onBody`, then forwards it to `forwardTo` (or answers 200). */
async function listen(
  onBody: (body: string) => void,
  forwardTo?: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      if (req.method === "POST") onBody(body);
      if (forwardTo === undefined) return void res.writeHead(200).end();
      fetch(`${forwardTo}${req.url ?? "/"}`, {
        method: req.method ?? "GET",
        headers: { "content-type": req.headers["content-type"] ?? "application/json" },
        ...(req.method === "POST" ? { body } : {}),
      })
        .then(async (answer) => res.writeHead(answer.status).end(Buffer.from(await answer.arrayBuffer())))
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Resolve once Alertmanager answers /-/ready, or fail with its output after 15 s (or when it exits). */
async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadlineMs = Date.now() + 15_000;
  while (Date.now() < deadlineMs && child.exitCode === null) {
    const ready = await fetch(`${url}/-/ready`).then(
      (answer) => answer.ok,
      () => false,
    );
    if (ready) return;
    await sleep(100);
  }
  await stop(child);
  throw new Error(`alertmanager did not get ready:\n${output()}`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}
