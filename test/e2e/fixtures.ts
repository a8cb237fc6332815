// Work directories, daemon config files, simulator faults and state-file readers for the end-to-end tests.
import { existsSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AlertEvent } from "../../src/domain/events.js";

/** A throwaway directory for one test: config file, cwd of the daemon and `state/`. */
export interface WorkDir {
  readonly dir: string;
  readonly stateDir: string;
  readonly configFile: string;
}

const dirs: string[] = [];

/** Create a fresh work directory (removed by `removeWorkDirs`). */
export function makeWorkDir(): WorkDir {
  const dir = mkdtempSync(join(tmpdir(), "pm-e2e-"));
  dirs.push(dir);
  return { dir, stateDir: join(dir, "state"), configFile: join(dir, "config.json") };
}

/** Remove every work directory (afterEach). */
export function removeWorkDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A webhook sink entry for the config. */
export interface WebhookSinkOptions {
  readonly url: string;
  readonly secret: string;
}

/**
 * The daemon config the tests use: the embedded simulator with no scripted faults, BTC/USD (plus `extraPairs`)
 * polled every 200 ms, one price_change rule (2 % over 10 s), and optionally the signed webhook sink.
 */
export function testConfig(
  work: WorkDir,
  options: { readonly extraPairs?: readonly string[]; readonly webhook?: WebhookSinkOptions } = {},
): Record<string, unknown> {
  const pairs = ["BTC/USD", ...(options.extraPairs ?? [])];
  return {
    upstream: { url: "simulator", simulator: { seed: 42, scenario: "" } },
    monitors: {
      offchain: pairs.map((pair) => ({ pair, periodMs: 200 })),
      onchain: [],
      publishers: [],
      funding: [],
      vaults: [],
    },
    rules: [{ kind: "price_change", id: "price_change_10s", windowMs: 10_000, threshold: 0.02 }],
    sinks:
      options.webhook === undefined
        ? []
        : [
            {
              kind: "webhook",
              name: "hook",
              url: options.webhook.url,
              secret: options.webhook.secret,
              failureThreshold: 1000,
              timeoutMs: 2_000,
              // one delivery per transition, at once: these tests follow single transitions
              groupBy: ["..."],
            },
          ],
    state: { dir: work.stateDir },
    shutdown: { drainTimeoutMs: 2_000 },
  };
}

/** Write `config` as the work dir's config file. */
export function writeConfig(work: WorkDir, config: unknown): void {
  writeFileSync(work.configFile, `${JSON.stringify(config, null, 2)}\n`);
}

/** Ask the embedded simulator for a BTC/USD spike (×1.06) through its control endpoint. */
export async function injectSpike(simulatorUrl: string, durationMs: number): Promise<void> {
  const response = await fetch(`${simulatorUrl}/_sim/faults`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ kind: "spike", pair: "BTC/USD", factor: 1.06, durationMs }),
  });
  const body = await response.text();
  if (response.status !== 201) throw new Error(`fault injection refused: ${response.status} ${body}`);
}

/** Inject a fault through the simulator's control endpoint (optionally for `durationMs`); its id. */
export async function postFault(simulatorUrl: string, fault: unknown, durationMs?: number): Promise<string> {
  const response = await fetch(`${simulatorUrl}/_sim/faults`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ fault, ...(durationMs === undefined ? {} : { durationMs }) }),
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`fault refused: ${response.status} ${text}`);
  return (JSON.parse(text) as { id: string }).id;
}

/** Remove an injected fault by id. */
export async function removeFault(simulatorUrl: string, id: string): Promise<void> {
  const response = await fetch(`${simulatorUrl}/_sim/faults/${encodeURIComponent(id)}`, { method: "DELETE" });
  if (response.status !== 204) throw new Error(`fault ${id} not removed: ${response.status}`);
}

/** One live outbox entry (docs/webhooks.md: records superseded by id, acknowledged by `{"ack":id}`). */
export interface OutboxRecord {
  readonly id: string;
  readonly attempts: number;
  readonly payload: AlertEvent;
}

/** Replay `<state>/outbox/<sink>.jsonl` into its live (unacknowledged) entries; a missing file is empty. */
export function readOutbox(file: string): OutboxRecord[] {
  if (!existsSync(file)) return [];
  const live = new Map<string, OutboxRecord>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    let record: { ack?: unknown; id?: unknown };
    try {
      record = JSON.parse(line) as { ack?: unknown; id?: unknown };
    } catch {
      continue; // a torn last line
    }
    if (typeof record.ack === "string") live.delete(record.ack);
    else if (typeof record.id === "string") live.set(record.id, record as OutboxRecord);
  }
  return [...live.values()];
}

/** Wait until `check()` holds, re-checking on every change inside `dir` (inotify, no polling loop). */
export async function waitForFiles(
  dir: string,
  check: () => boolean,
  options: { readonly timeoutMs: number; readonly what: string },
): Promise<void> {
  if (check()) return;
  await new Promise<void>((resolve, reject) => {
    const watcher = watch(dir, () => {
      if (!check()) return;
      finish();
      resolve();
    });
    const timer = setTimeout(() => {
      finish();
      if (check()) resolve();
      else reject(new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.what}`));
    }, options.timeoutMs);
    const finish = (): void => {
      clearTimeout(timer);
      watcher.close();
    };
    // the change may have landed between the first check and the watch
    if (check()) {
      finish();
      resolve();
    }
  });
}
