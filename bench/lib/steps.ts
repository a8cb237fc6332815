// Detection-latency plumbing shared by the latency and streaming benches: inject a price step, watch for the alert at a WebSocket client.
import WebSocket from "ws";
import type { RuleConfig } from "../../src/domain/rules/index.js";
import { benchConfig } from "./config.js";

/** Wall-clock ms with sub-ms resolution: the one clock every timestamp of these benches is read from. */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

/** The enabled `price_change` rules of config/default.json (a step bench has nothing to time without one). */
function shippedPriceChangeRules(): Extract<RuleConfig, { kind: "price_change" }>[] {
  const rules: readonly RuleConfig[] = benchConfig({}).rules;
  const priceChange = rules.flatMap((rule) =>
    rule.kind === "price_change" && rule.enabled !== false ? [rule] : [],
  );
  if (priceChange.length === 0) throw new Error("no price_change rule in the shipped config");
  return priceChange;
}

/**
 * The move at which the daemon's shipped rules alert: the smallest `threshold` of the enabled `price_change` rules
 * of config/default.json, so a bench starts its clock at the same rule the daemon judges by.
 */
export function priceChangeThreshold(): number {
  return Math.min(...shippedPriceChangeRules().map((rule) => rule.threshold));
}

/**
 * The wait before the first step: `warmupS`, or longer when the shortest enabled `price_change` window of the shipped
 * rules is longer (plus a second of polling), so the rule has a reference one window back when the first step comes
 * (with less history it gives no verdict, and a step would be timed from "visible" to a poll that cannot fire yet).
 */
export function stepWarmupS(warmupS: number): number {
  const shortestWindowMs = Math.min(...shippedPriceChangeRules().map((rule) => rule.windowMs));
  return Math.max(warmupS, Math.ceil(shortestWindowMs / 1000) + 1);
}

/** A step of `factor` on `pair` through the simulator's control endpoint; resolves with the time the request left. */
export async function injectSpike(simUrl: string, pair: string, factor: number): Promise<number> {
  const sentAtMs = wallMs();
  const response = await fetch(`${simUrl}/_sim/faults`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ kind: "spike", pair, factor }),
  });
  if (!response.ok) throw new Error(`POST /_sim/faults: ${response.status} ${await response.text()}`);
  return sentAtMs;
}

/** A WebSocket client subscribed to alerts: when each pair's first price_change alert frame arrived. */
export interface AlertWatcher {
  /** Arrival time of the first firing price_change frame for `pair`, waiting up to `timeoutMs` (NaN if none). */
  firstFiring(pair: string, timeoutMs: number): Promise<number>;
  /** The summary of the first firing price_change alert of `pair` (what the daemon measured), if one arrived. */
  summaryOf(pair: string): string | undefined;
  /** When the daemon observed the poll that fired that alert (its context's `observedAt`, wall ms), NaN if unknown. */
  observedAtOf(pair: string): number;
  close(): void;
}

/** Connect to the daemon's /ws, subscribe to alerts and record arrival times (taken as the frame is handled). */
export async function watchAlerts(wsUrl: string): Promise<AlertWatcher> {
  const socket = new WebSocket(wsUrl);
  const firing = new Map<string, number>();
  const summaries = new Map<string, string>();
  const observed = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  socket.on("message", (data: Buffer) => {
    const at = wallMs();
    const event = JSON.parse(data.toString()) as {
      type: string;
      alert?: {
        rule: string;
        status: string;
        labels: Record<string, string>;
        summary?: string;
        context?: { observedAt?: unknown };
      };
    };
    const alert = event.alert;
    if (event.type !== "alert" || alert?.rule !== "price_change" || alert.status !== "firing") return;
    const pair = alert.labels["pair"] ?? "";
    if (firing.has(pair)) return;
    firing.set(pair, at);
    summaries.set(pair, alert.summary ?? "");
    const observedAt = alert.context?.observedAt;
    observed.set(pair, typeof observedAt === "string" ? Date.parse(observedAt) : Number.NaN);
    waiters.get(pair)?.();
  });
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  socket.send(JSON.stringify({ op: "subscribe", id: "1", channels: ["alerts"] }));
  return {
    firstFiring: (pair, timeoutMs) =>
      new Promise<number>((resolve) => {
        if (firing.has(pair)) return resolve(firing.get(pair)!);
        const timer = setTimeout(() => resolve(Number.NaN), timeoutMs);
        waiters.set(pair, () => {
          clearTimeout(timer);
          resolve(firing.get(pair)!);
        });
      }),
    summaryOf: (pair) => summaries.get(pair),
    observedAtOf: (pair) => observed.get(pair) ?? Number.NaN,
    close: () => socket.terminate(),
  };
}

/** A price in the API's 18-decimal hex form as a double. */
export function hexPrice(hex: string): number {
  return Number(BigInt(hex)) / 1e18;
}
