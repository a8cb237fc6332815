// In-process daemon for the reliability suites: createApp on a temp state dir with a config object, bus recording.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import type { Subscription } from "rxjs";
import { createApp, type App } from "../../../src/app.js";
import { loadConfig } from "../../../src/config/load.js";
import type { AppConfig } from "../../../src/config/types.js";
import type { AlertEvent, BusEvent, JournaledEvent } from "../../../src/domain/events.js";
import { Signal } from "./wait.js";

/** Write `config` (plus a fresh temp state dir) to a file and load it through the real loader. */
export function loadTestConfig(config: Record<string, unknown>): AppConfig {
  const dir = mkdtempSync(join(tmpdir(), "pm-reliability-app-"));
  const file = join(dir, "config.json");
  writeFileSync(file, JSON.stringify({ state: { dir: join(dir, "state") }, ...config }));
  return loadConfig({ configFile: file, env: {}, defaultFile: null, cwd: dir }).config;
}

/** A started app with everything it published recorded in order. */
export interface RecordedApp {
  readonly app: App;
  readonly port: number;
  readonly config: AppConfig;
  /** Journaled events seen on the bus, in emission order. */
  readonly journaled: JournaledEvent[];
  readonly alerts: () => readonly AlertEvent[];
  /** Price ticks per pair. */
  readonly ticks: Map<string, number>;
  /** Parsed log lines at info and above. */
  readonly logs: Record<string, unknown>[];
  /** Notified on every bus event. */
  readonly changed: Signal;
  stop(): Promise<void>;
}

/** Create and start the app; `random` drives jitter and backoff. */
export async function startRecordedApp(config: AppConfig, random: () => number): Promise<RecordedApp> {
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString("utf8").split("\n"))
        if (line !== "") logs.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  const logger = pino({ level: "info" }, destination);
  const app = createApp({ config, logger, nowMs: Date.now, random });
  const journaled: JournaledEvent[] = [];
  const ticks = new Map<string, number>();
  const changed = new Signal();
  let subscription: Subscription | undefined;
  const record = (event: BusEvent): void => {
    if (event.type === "price") ticks.set(event.tick.pair, (ticks.get(event.tick.pair) ?? 0) + 1);
    else journaled.push(event);
    changed.notify();
  };
  const started = app.start();
  // events$ exists once start() has opened the state store (synchronously, before its first await)
  subscription = app.events.events$.subscribe(record);
  // the recording counts price ticks too, which reach the bus only while someone wants them
  app.events.wantPrices();
  const { port } = await started;
  let stopped = false;
  return {
    app,
    port,
    config,
    journaled,
    alerts: () => journaled.filter((e): e is AlertEvent => e.type === "alert"),
    ticks,
    logs,
    changed,
    async stop() {
      if (stopped) return;
      stopped = true;
      await app.stop(2_000);
      subscription?.unsubscribe();
      subscription = undefined;
    },
  };
}
