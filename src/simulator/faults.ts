// Fault model: the Fault union, scheduled activations (offsets from simulator start, optional repeat) and per-time queries.
import type { Network } from "../domain/types.js";
import type { EndpointName } from "../upstream/types.js";

/** Endpoint kinds a transport fault can target (same names as the client's metrics). */
export type EndpointKind = EndpointName;

/** Every fault the simulator can inject (its type comes from its schema); `pair`/`endpoint` filters are optional ("any" when absent). */
export type { Fault } from "./fault-parser.js";
import type { Fault } from "./fault-parser.js";

export type FaultKind = Fault["kind"];

/** A fault with its schedule: active from `atMs` (after simulator start) for `durationMs`, every `repeatEveryMs`. */
export interface ScheduledFault {
  readonly id: string;
  readonly origin: "scenario" | "control";
  readonly fault: Fault;
  readonly atMs: number;
  /** null = until removed. */
  readonly durationMs: number | null;
  /** null = once. */
  readonly repeatEveryMs: number | null;
}

/** Transport-level effects on one request. */
export interface TransportEffects {
  readonly latencyMs: number;
  readonly outage: { readonly status: 500 | 503 | 429; readonly retryAfterS: number } | null;
  readonly malformed: boolean;
  readonly truncated: boolean;
}

/** Effects on the SSE price stream at one instant: pairs left out of events, connections cut, events broken. */
export interface StreamEffects {
  /** Every pair stalls (no events at all, keep-alive comments only). */
  readonly stallAll: boolean;
  /** Pairs left out of the price events. */
  readonly stalledPairs: ReadonlySet<string>;
  /** Open stream connections are closed, and new ones closed as soon as they open. */
  readonly disconnect: boolean;
  /** Each event's data is broken JSON. */
  readonly malformed: boolean;
}

const NO_STREAM_EFFECTS: StreamEffects = {
  stallAll: false,
  stalledPairs: new Set(),
  disconnect: false,
  malformed: false,
};

const NO_TRANSPORT: TransportEffects = { latencyMs: 0, outage: null, malformed: false, truncated: false };

/** Elapsed ms into the current activation of `entry` at `tMs`, or null when it is not active. */
export function activationElapsedMs(entry: ScheduledFault, startMs: number, tMs: number): number | null {
  let elapsedMs = tMs - startMs - entry.atMs;
  if (elapsedMs < 0) return null;
  if (entry.repeatEveryMs !== null) elapsedMs %= entry.repeatEveryMs;
  if (entry.durationMs !== null && elapsedMs >= entry.durationMs) return null;
  return elapsedMs;
}

/** Mutable set of scheduled faults with time-indexed queries; `version` changes on every edit (cache key). */
export class FaultBook {
  readonly startMs: number;
  #entries: ScheduledFault[] = [];
  #nextId = 1;
  #version = 0;

  constructor(startMs: number, scripted: readonly Omit<ScheduledFault, "id" | "origin">[] = []) {
    this.startMs = startMs;
    for (const entry of scripted) this.add({ ...entry, origin: "scenario" });
  }

  /** Bumped on every add/remove so response caches never serve a stale fault state. */
  get version(): number {
    return this.#version;
  }

  get entries(): readonly ScheduledFault[] {
    return this.#entries;
  }

  /** Add a fault; returns its id ("f1", "f2", ... in insertion order, deterministic). */
  add(entry: Omit<ScheduledFault, "id">): string {
    const id = `f${this.#nextId++}`;
    this.#entries = [...this.#entries, { ...entry, id }];
    this.#version++;
    return id;
  }

  /** Remove one fault by id; false when unknown. */
  remove(id: string): boolean {
    const before = this.#entries.length;
    this.#entries = this.#entries.filter((entry) => entry.id !== id);
    this.#version++;
    return this.#entries.length !== before;
  }

  /** Remove runtime faults, or every fault (scripted included) when `includeScenario`. */
  clear(includeScenario: boolean): void {
    this.#entries = includeScenario ? [] : this.#entries.filter((entry) => entry.origin === "scenario");
    this.#version++;
  }

  /** Calls `visit` for each fault of `kind` active at `tMs` with the ms elapsed in its activation. */
  #eachActive<K extends FaultKind>(
    kind: K,
    tMs: number,
    visit: (fault: Extract<Fault, { kind: K }>, elapsedMs: number, entry: ScheduledFault) => void,
  ): void {
    for (const entry of this.#entries) {
      if (entry.fault.kind !== kind) continue;
      const elapsedMs = activationElapsedMs(entry, this.startMs, tMs);
      if (elapsedMs !== null) visit(entry.fault as Extract<Fault, { kind: K }>, elapsedMs, entry);
    }
  }

  /** Multiplier on a directly quoted pair's mid price (spikes and drifts). */
  priceFactor(pairId: string, tMs: number): number {
    let factor = 1;
    this.#eachActive("spike", tMs, (fault) => {
      if (fault.pair === pairId) factor *= fault.factor;
    });
    this.#eachActive("drift", tMs, (fault, elapsedMs, entry) => {
      if (fault.pair !== pairId) return;
      const progress = entry.durationMs === null ? 1 : elapsedMs / entry.durationMs;
      factor *= 1 + (fault.factor - 1) * progress;
    });
    return factor;
  }

  /** Instant since which a source stops updating on a pair, or null. */
  sourceFrozenSinceMs(pairId: string, source: string, tMs: number): number | null {
    let since: number | null = null;
    this.#eachActive("frozenSource", tMs, (fault, elapsedMs) => {
      if (fault.source !== source || (fault.pair !== undefined && fault.pair !== pairId)) return;
      since = since === null ? tMs - elapsedMs : Math.min(since, tMs - elapsedMs);
    });
    return since;
  }

  /** Whether a source is removed from a pair's aggregation and components. */
  sourceDropped(pairId: string, source: string, tMs: number): boolean {
    let dropped = false;
    this.#eachActive("dropSources", tMs, (fault) => {
      if ((fault.pair === undefined || fault.pair === pairId) && fault.sources.includes(source))
        dropped = true;
    });
    return dropped;
  }

  /** Instant since which a publisher stops pushing on a network, or null. */
  publisherFrozenSinceMs(publisher: string, network: Network, tMs: number): number | null {
    let since: number | null = null;
    this.#eachActive("frozenPublisher", tMs, (fault, elapsedMs) => {
      if (fault.publisher !== publisher || (fault.network !== undefined && fault.network !== network)) return;
      since = since === null ? tMs - elapsedMs : Math.min(since, tMs - elapsedMs);
    });
    return since;
  }

  /** Latency, outage, malformed and truncated effects on a request to `endpoint` (for `pairId`, if any). */
  transport(endpoint: EndpointKind, pairId: string | null, tMs: number): TransportEffects {
    if (this.#entries.length === 0) return NO_TRANSPORT;
    let latencyMs = 0;
    let outage: TransportEffects["outage"] = null;
    let malformed = false;
    let truncated = false;
    const matches = (fault: { readonly endpoint?: EndpointKind; readonly pair?: string }): boolean =>
      (fault.endpoint === undefined || fault.endpoint === endpoint) &&
      (fault.pair === undefined || fault.pair === pairId);
    this.#eachActive("latency", tMs, (fault) => {
      if (matches(fault)) latencyMs += fault.latencyMs;
    });
    this.#eachActive("outage", tMs, (fault) => {
      if (matches(fault) && outage === null)
        outage = { status: fault.status, retryAfterS: fault.retryAfterS ?? 1 };
    });
    this.#eachActive("malformed", tMs, (fault) => {
      if (matches(fault)) malformed = true;
    });
    this.#eachActive("truncated", tMs, (fault) => {
      if (matches(fault)) truncated = true;
    });
    return { latencyMs, outage, malformed, truncated };
  }

  /** Stream faults in force at `tMs` (stall of every pair or of some, disconnect, malformed events). */
  stream(tMs: number): StreamEffects {
    if (this.#entries.length === 0) return NO_STREAM_EFFECTS;
    let stallAll = false;
    const stalledPairs = new Set<string>();
    let disconnect = false;
    let malformed = false;
    this.#eachActive("streamStall", tMs, (fault) => {
      if (fault.pair === undefined) stallAll = true;
      else stalledPairs.add(fault.pair);
    });
    this.#eachActive("streamDisconnect", tMs, () => {
      disconnect = true;
    });
    this.#eachActive("streamMalformed", tMs, () => {
      malformed = true;
    });
    return { stallAll, stalledPairs, disconnect, malformed };
  }

  /** Vault overrides: deposits paused and/or a forced status. */
  vault(vaultId: string, tMs: number): { readonly paused: boolean; readonly status: string | null } {
    let paused = false;
    let status: string | null = null;
    this.#eachActive("vaultPaused", tMs, (fault) => {
      if (fault.vault === vaultId) paused = true;
    });
    this.#eachActive("vaultStatus", tMs, (fault) => {
      if (fault.vault === vaultId) status = fault.status;
    });
    return { paused, status };
  }

  /** Funding-rate adjustment for a pair and source: multiply, or set outright. */
  funding(
    pairId: string,
    source: string,
    tMs: number,
  ): { readonly factor: number; readonly set: number | null } {
    let factor = 1;
    let set: number | null = null;
    this.#eachActive("fundingSpike", tMs, (fault) => {
      if (fault.pair !== pairId || (fault.source !== undefined && fault.source !== source)) return;
      if (fault.hourlyRate !== undefined) set = fault.hourlyRate;
      factor *= fault.factor ?? 1;
    });
    return { factor, set };
  }
}
