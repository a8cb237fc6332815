// Test helpers: a simulator on port 0 with a manual clock and raw HTTP access.
import { Agent, request } from "undici";
import { createManualClock, type ManualClock } from "../../src/simulator/clock.js";
import type { Scenario } from "../../src/simulator/scenario.js";
import { startSimulator, type RunningSimulator, type SimulatorOptions } from "../../src/simulator/server.js";

/** 2026-11-22T10:00:00Z: every test starts its manual clock here. */
export const T0_MS = Date.UTC(2026, 10, 22, 10, 0, 0);

/** A running simulator with its manual clock. */
export interface TestSim {
  readonly sim: RunningSimulator;
  readonly clock: ManualClock;
}

/** Start a simulator on 127.0.0.1:0 with a manual clock at T0 (seed 7 unless given). */
export async function startTestSim(
  options: Omit<SimulatorOptions, "clock"> & { readonly scenario?: Scenario } = {},
): Promise<TestSim> {
  const clock = createManualClock(T0_MS);
  const sim = await startSimulator({ seed: 7, ...options, clock });
  return { sim, clock };
}

/** Short keep-alive pool so closing the simulator never waits on idle sockets. */
export const testAgent = new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });

/** A raw response: status, headers and body text. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** GET (or another method) a path of the simulator and read the whole body as text. */
export async function raw(
  sim: RunningSimulator,
  path: string,
  init: { method?: "GET" | "POST" | "DELETE"; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  const response = await request(`${sim.url}${path}`, {
    method: init.method ?? "GET",
    headers: init.headers ?? {},
    ...(init.body === undefined ? {} : { body: init.body }),
    dispatcher: testAgent,
  });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

/** GET a path expecting JSON; returns status and the parsed body. */
export async function getJson<T = unknown>(
  sim: RunningSimulator,
  path: string,
  headers?: Record<string, string>,
): Promise<{ status: number; body: T; text: string }> {
  const response = await raw(sim, path, headers === undefined ? {} : { headers });
  return { status: response.status, body: JSON.parse(response.text) as T, text: response.text };
}
