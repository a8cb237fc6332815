// Run-time fault control: the programmatic SimulatorControl and its HTTP face under /_sim/ on the simulator's port.
import { PmError } from "../domain/errors.js";
import { activationElapsedMs, type Fault, type FaultBook, type ScheduledFault } from "./faults.js";
import type { Market } from "./market.js";
import { JSON_TYPE, plainText, type SimResponse } from "./responses.js";
import { parseFault } from "./fault-parser.js";

/** When an injected fault starts (after `delayMs`, default now) and how long it lasts (default until removed). */
export interface InjectOptions {
  readonly delayMs?: number;
  readonly durationMs?: number;
}

/** One fault as reported by the state endpoint. */
export interface FaultState extends ScheduledFault {
  readonly active: boolean;
}

/** Snapshot of the simulator for tests and the control endpoint. */
export interface SimState {
  readonly seed: number;
  readonly scenario: string;
  readonly startMs: number;
  readonly nowMs: number;
  readonly faults: readonly FaultState[];
}

/** Inject and clear faults while the simulator runs (same effect as the HTTP control endpoint). */
export interface SimulatorControl {
  /** Add a fault; returns its id. */
  inject(fault: Fault, options?: InjectOptions): string;
  /** Remove one fault (scenario or injected); false when the id is unknown. */
  remove(id: string): boolean;
  /** Remove injected faults; with `includeScenario`, the scripted ones too. */
  clear(options?: { readonly includeScenario?: boolean }): void;
  state(): SimState;
}

/** Build the control object of a market's fault book. */
export function createControl(market: Market, book: FaultBook, scenarioName: string): SimulatorControl {
  return {
    inject(fault, options = {}) {
      const atMs = market.clock.nowMs() - book.startMs + (options.delayMs ?? 0);
      return book.add({
        origin: "control",
        fault,
        atMs,
        durationMs: options.durationMs ?? null,
        repeatEveryMs: null,
      });
    },
    remove: (id) => book.remove(id),
    clear: (options = {}) => book.clear(options.includeScenario === true),
    state() {
      const nowMs = market.clock.nowMs();
      return {
        seed: market.seed,
        scenario: scenarioName,
        startMs: book.startMs,
        nowMs,
        faults: book.entries.map((entry) => ({
          ...entry,
          active: activationElapsedMs(entry, book.startMs, nowMs) !== null,
        })),
      };
    },
  };
}

function json(status: number, body: unknown): SimResponse {
  return { status, contentType: JSON_TYPE, body: JSON.stringify(body) };
}

function optionalMs(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new PmError("PM_ERR_INVALID_REQUEST", `${field}: must be a non-negative number of ms`);
  }
  return value;
}

/** Parse a POST body: `{fault, durationMs?, delayMs?}` or a bare fault with those two keys beside `kind`. */
function parseInjection(text: string): { fault: Fault; options: InjectOptions } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new PmError("PM_ERR_INVALID_REQUEST", "body is not valid JSON");
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new PmError("PM_ERR_INVALID_REQUEST", "body must be a JSON object");
  }
  const { durationMs, delayMs, fault, ...rest } = json as Record<string, unknown>;
  const durationValue = optionalMs(durationMs, "durationMs");
  const delayValue = optionalMs(delayMs, "delayMs");
  const options: InjectOptions = {
    ...(durationValue === undefined ? {} : { durationMs: durationValue }),
    ...(delayValue === undefined ? {} : { delayMs: delayValue }),
  };
  return { fault: parseFault(fault ?? rest, fault === undefined ? "body" : "body.fault"), options };
}

/** Serve /_sim/faults (POST, DELETE), /_sim/faults/{id} (DELETE) and /_sim/state (GET). */
export function handleControl(
  control: SimulatorControl,
  method: string,
  path: string,
  body: string,
): SimResponse {
  if (path === "/_sim/state" && method === "GET") return json(200, control.state());
  if (path === "/_sim/faults" && method === "GET") return json(200, control.state().faults);
  if (path === "/_sim/faults" && method === "POST") {
    try {
      const { fault, options } = parseInjection(body);
      return json(201, { id: control.inject(fault, options) });
    } catch (error) {
      return json(400, { error: error instanceof Error ? error.message : String(error) });
    }
  }
  if (path === "/_sim/faults" && method === "DELETE") {
    control.clear();
    return { status: 204, contentType: JSON_TYPE, body: "" };
  }
  if (path === "/_sim/faults/all" && method === "DELETE") {
    control.clear({ includeScenario: true });
    return { status: 204, contentType: JSON_TYPE, body: "" };
  }
  if (path.startsWith("/_sim/faults/") && method === "DELETE") {
    const removed = control.remove(decodeURIComponent(path.slice("/_sim/faults/".length)));
    return removed
      ? { status: 204, contentType: JSON_TYPE, body: "" }
      : json(404, { error: "unknown fault id" });
  }
  return plainText(404, "Not Found");
}
